#include "lower/choose_mapping.h"

#include "lower/lowering_passes.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace lanejit::lower {
namespace {

// Rows across lanes pays per block of W rows shuffles (the row layout's
// fused reduction and broadcasts, or one row per lane's W x W transposes)
// where packet-local pays, per row and reduction, a tail, a combine and a
// row set-up; past a few packets per row the latter is amortised. Measured
// with the transposes, rechecked with the row layout at W = 8
// (docs/architecture.md, "Rows across lanes").
constexpr int64_t kMaxPacketsPerRow = 4;
// The emitted code of one block: instructions (opCost) over every column
// the program evaluates. Bounds compile time and code size.
constexpr double kBlockBudget = 24000;

// Estimated instructions of one block at C columns: each column-vector
// node once per column, a row-uniform one once.
double blockCost(const Program &program, int64_t cols) {
  double cost = 0;
  forEachNode(program, [&](const Expr &e) {
    double len = 1;
    if (e->len)
      len = std::max(0.0, (double(e->len->coeff()) * cols + double(e->len->offset())) /
                              double(e->len->denom()));
    cost += opCost(*e) * len;
  });
  return cost;
}

int64_t evaluated(const Dim &d, int64_t cols) {
  return std::max<int64_t>(0, d.evaluate(cols).value_or(0));
}

} // namespace

std::string rowsAcrossLanesUnavailable(const Program &program) {
  bool grouped = false;
  forEachNode(program, [&](const Expr &e) { grouped = grouped || readsStoredOperand(*e); });
  return grouped ? "groups or repeats columns: they read the workspace, which only "
                   "packet-local rows have"
                 : "";
}

MappingRule chooseMapping(const KernelPlan &plan, bool enabled) {
  if (!enabled)
    return {0, 0, 0, "switch rows_across_lanes off"};
  if (plan.flatten_rows)
    return {0, 0, 0, "all-elementwise: dense rows already run as one long row (flatten-rows)"};
  if (std::string why = rowsAcrossLanesUnavailable(plan.program); !why.empty())
    return {0, 0, 0, why};
  int64_t bySize = kMaxRowsAcrossLanesColumns;
  while (bySize > 0 && blockCost(plan.program, bySize) > kBlockBudget)
    --bySize;
  int64_t limit = std::min<int64_t>(bySize, kMaxPacketsPerRow * plan.lanes);
  if (limit == 0)
    return {0, 0, 0, "the program is too large to emit once per column"};
  return {limit, plan.lanes, bySize,
          "rows of at most " + std::to_string(kMaxPacketsPerRow) +
              " packets, where a row's set-up, tail and combine cost more than sharing a "
              "block's packets; fewer rows than W would run one masked block"};
}

bool rowLayoutApplies(const Program &program, int64_t cols) {
  if (cols < 1 || cols > kReductionLanes)
    return false;
  auto isC = [&](const Dim &d) { return d.evaluate(cols).value_or(-1) == cols; };
  std::vector<int> writes(program.outputs.size(), 0);
  for (const Write &w : program.writes)
    if (!isC(w.len) || w.begin.evaluate(cols).value_or(-1) != 0 ||
        !isC(program.outputs.at(w.output).cols) || ++writes[w.output] > 1)
      return false;
  bool whole = true;
  forEachNode(program, [&](const Expr &n) {
    if ((n->len && !isC(*n->len)) ||
        (n->kind == NodeKind::Slice && n->begin.evaluate(cols).value_or(-1) != 0))
      whole = false;
  });
  return whole;
}

int rowLayoutLanes(int64_t cols, int lanes) {
  int p = 1;
  while (p < cols && p < lanes)
    p *= 2;
  return p;
}

MappingCosts estimateMappingCosts(const KernelPlan &plan, int64_t cols) {
  MappingCosts costs;
  // Integer log2 (lanes and accumulators are powers of two): libm's log2
  // was the first libm call of a process that links a cached kernel, and
  // binding it cost that load more than this whole estimate.
  auto log2 = [](int n) { return double(std::bit_width(static_cast<unsigned>(n)) - 1); };
  double lanes = plan.lanes, logLanes = log2(plan.lanes);
  // Packet-local: each traversal's body per packet (its tail packet costs
  // a full one, plus building its mask), a row set-up per traversal, and
  // per reduction the combine of K accumulators and the W-lane tree.
  for (const Traversal &t : plan.traversals) {
    double body = double(t.writes.size() + t.materializations.size() + t.reductions.size());
    for (const Expr &e : laneValuesOf(plan, t))
      body += plan.readsBack(t, e.get()) ? 1 : opCost(*e);
    int64_t len = evaluated(t.len, cols);
    double packets = std::ceil(double(len) / lanes) + (len % plan.lanes ? 1 : 0) * 0.5;
    costs.packet_local += packets * body + 4;
    costs.packet_local += double(t.reductions.size()) * (log2(plan.accumulators) + 2 * logLanes);
  }
  if (rowLayoutApplies(plan.program, cols)) {
    // Row layout: a row takes P lanes (C <= W) or Q packets, so the code
    // runs over that many lanes per row. Each reduction folds a row's Q
    // packets, then the block's P-lane (or W-lane) segments pair off in a
    // tree of two shuffles and one op per pair, and its result is
    // broadcast back with one permute per packet.
    double p = rowLayoutLanes(cols, plan.lanes);
    double q = std::ceil(double(cols) / lanes);
    double rowLanes = cols <= plan.lanes ? p : q * lanes;
    double segment = cols <= plan.lanes ? p : lanes;
    double perReduction = (q - 1) + 3 * (segment - 1) / lanes + rowLanes / lanes;
    costs.rows_across_lanes = blockCost(plan.program, cols) * rowLanes / double(cols) / lanes;
    for (const Traversal &t : plan.traversals)
      costs.rows_across_lanes += double(t.reductions.size()) * perReduction;
    return costs;
  }
  // One row per lane: every node once per column for W rows at once, and
  // a W x W transpose (W log2 W shuffles) per W columns of each row tensor
  // read or written, shared by the block's W rows.
  costs.rows_across_lanes = blockCost(plan.program, cols) / lanes;
  auto transposes = [&](const Dim &width) {
    return std::ceil(double(evaluated(width, cols)) / lanes) * logLanes;
  };
  for (const Param &p : plan.program.inputs)
    if (p.kind == ParamKind::RowTensor)
      costs.rows_across_lanes += transposes(p.cols);
  for (const Output &o : plan.program.outputs)
    costs.rows_across_lanes += transposes(o.cols);
  return costs;
}

} // namespace lanejit::lower
