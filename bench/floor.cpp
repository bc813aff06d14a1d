// The per-case floor (bench/floor.h).
#include "floor.h"

#include "instruction_count.h"
#include "issue_width.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace lanejit::bench {
namespace {

// Columns per period of the column extrapolation: a multiple of every
// W x accumulator count a kernel unrolls by (16 lanes x 4 at most), so two
// column counts with the same remainder differ by whole groups only.
constexpr int64_t kColumnPeriod = 256;

const SteppedCallRecord *find(const ComputeFloorRecord &r, int64_t cols, int64_t rows) {
  for (const SteppedCallRecord &s : r.stepped)
    if (s.cols == cols && s.rows == rows)
      return &s;
  return nullptr;
}

// n(C) on the line through (c1, n1) and (c2, n2).
double along(double n1, double n2, int64_t c1, int64_t c2, int64_t c) {
  return n1 + (n2 - n1) * static_cast<double>(c - c1) / static_cast<double>(c2 - c1);
}

} // namespace

StepPlan planSteps(int64_t rows, int64_t cols, int64_t row_group, bool any_cols) {
  StepPlan plan;
  plan.row_group = row_group = std::max<int64_t>(1, row_group);
  int64_t c1 = kColumnPeriod + cols % kColumnPeriod, c2 = c1 + kColumnPeriod;
  bool columns = any_cols && cols >= c2 + kColumnPeriod;
  bool by_rows = rows >= 2 * row_group;
  if (columns && by_rows) {
    plan.method = "rows and columns";
    plan.calls = {{c1, row_group}, {c1, 2 * row_group}, {c2, row_group}};
  } else if (columns) {
    plan.method = "columns";
    plan.calls = {{c1, rows}, {c2, rows}};
  } else if (by_rows) {
    plan.method = "rows";
    plan.calls = {{cols, row_group}, {cols, 2 * row_group}};
  } else {
    plan.method = "whole call";
    plan.calls = {{cols, rows}};
  }
  return plan;
}

StepPlan planFlatRows(int64_t rows, int64_t cols) {
  // Row counts whose elements keep R x C's remainder modulo 256, so the
  // count is linear between them and R.
  int64_t period = kColumnPeriod / std::gcd(cols, kColumnPeriod);
  int64_t k1 = period + rows % period, k2 = k1 + period;
  if (rows < k2 + period)
    return {"whole call", 1, {{cols, rows}}};
  return {"flat rows", 1, {{cols, k1}, {cols, k2}}};
}

std::optional<std::pair<double, double>> perCallCounts(const ComputeFloorRecord &r, int64_t rows,
                                                       int64_t cols) {
  const int64_t k = r.row_group;
  auto both = [](auto f) { return std::pair<double, double>{f(0), f(1)}; };
  auto n = [](const SteppedCallRecord *s, int which) {
    return static_cast<double>(which == 0 ? s->instructions : s->vector);
  };
  double groups = static_cast<double>(rows) / static_cast<double>(k);
  if (r.method == "whole call") {
    const SteppedCallRecord *a = r.stepped.size() == 1 ? find(r, cols, rows) : nullptr;
    if (!a)
      return std::nullopt;
    return both([&](int w) { return n(a, w); });
  }
  if (r.method == "rows") {
    const SteppedCallRecord *a = find(r, cols, k), *b = find(r, cols, 2 * k);
    if (!a || !b || r.stepped.size() != 2)
      return std::nullopt;
    // fixed = n(k) - (n(2k) - n(k)); a call = fixed + groups x per group.
    return both([&](int w) { return 2 * n(a, w) - n(b, w) + groups * (n(b, w) - n(a, w)); });
  }
  if (r.method == "flat rows") {
    if (r.stepped.size() != 2 || r.stepped[0].cols != cols || r.stepped[1].cols != cols)
      return std::nullopt;
    const SteppedCallRecord &a = r.stepped[0], &b = r.stepped[1];
    return both([&](int w) { return along(n(&a, w), n(&b, w), a.rows, b.rows, rows); });
  }
  if (r.stepped.empty())
    return std::nullopt;
  int64_t c1 = r.stepped[0].cols, c2 = c1 + kColumnPeriod;
  if (r.method == "columns") {
    const SteppedCallRecord *a = find(r, c1, rows), *b = find(r, c2, rows);
    if (!a || !b || r.stepped.size() != 2)
      return std::nullopt;
    return both([&](int w) { return along(n(a, w), n(b, w), c1, c2, cols); });
  }
  if (r.method == "rows and columns") {
    const SteppedCallRecord *a = find(r, c1, k), *b = find(r, c1, 2 * k), *d = find(r, c2, k);
    if (!a || !b || !d || r.stepped.size() != 3)
      return std::nullopt;
    return both([&](int w) {
      double fixed = 2 * n(a, w) - n(b, w);
      double group = along(n(b, w) - n(a, w), n(d, w) - fixed, c1, c2, cols);
      return fixed + groups * group;
    });
  }
  return std::nullopt;
}

// Whether the kernel runs a dense call's rows as one row (flatten_rows):
// its count then follows R x C elements, not R rows of C.
bool flattens(const Kernel &kernel) {
  for (const CompileReport::Pass &p : kernel.report().passes)
    if (p.name == "flatten-rows" && p.changed)
      return true;
  return false;
}

ComputeFloorRecord measureComputeFloor(const Kernel &kernel, check::Case &c, int64_t max_steps) {
  ComputeFloorRecord r;
  const int64_t rows = c.shape.rows, cols = c.shape.cols;
  NativeEntry entry = kernel.nativeEntry(rows, cols);
  const CompileReport::Mapping &mapping = kernel.report().mapping;
  bool across = cols <= mapping.rows_across_lanes_max_cols && rows >= mapping.lanes;
  // The generic entry reads C from its arguments; an entry compiled for
  // one C must be called with that C.
  bool any_cols = entry == kernel.nativeEntry();
  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  bool dense = true;
  for (auto *list : {&c.inputs, &c.outputs})
    for (check::GuardedBuffer &b : *list) {
      buffers.push_back(b.raw());
      strides.push_back(b.rowStride());
      dense = dense && (b.rows() <= 1 || b.rowStride() == cols);
    }
  StepPlan plan;
  r.target_rows = rows;
  r.target_cols = cols;
  if (flattens(kernel) && dense && !across) {
    // A flattened call is one row of R x C: the generic entry is stepped
    // as such; an entry for one C only whole, while that is affordable.
    if (any_cols) {
      r.target_rows = 1;
      r.target_cols = rows * cols;
      plan = planSteps(1, rows * cols, 1, true);
    } else {
      plan = planFlatRows(rows, cols);
    }
  } else {
    plan = planSteps(rows, cols, across ? mapping.lanes : 1, any_cols);
  }
  r.method = plan.method;
  r.row_group = plan.row_group;

  int64_t floats = kernel.workspaceFloats(cols);
  check::GuardedBuffer workspace;
  if (floats > 0)
    workspace = check::GuardedBuffer(1, floats, floats);
  int64_t budget = max_steps;
  for (auto [step_cols, step_rows] : plan.calls) {
    // Shorter rows keep the real call's density: a buffer whose rows were
    // back to back (stride C) is stepped with stride = the stepped C.
    std::vector<int64_t> step_strides = strides;
    for (int64_t &s : step_strides)
      s = s == cols ? step_cols : s;
    LaunchArgs args{buffers.data(), step_strides.data(), r.target_rows, step_cols,
                    floats > 0 ? workspace.data() : nullptr};
    CountResult counted = countExecuted(entry, args, 0, step_rows, budget);
    if (!counted.counts) {
      r.unavailable = counted.unavailable;
      return r;
    }
    // Each step also walks the child from its stop to the entry (~50).
    budget -= counted.counts->instructions;
    r.stepped.push_back({step_cols, step_rows, counted.counts->instructions,
                         counted.counts->vector});
  }
  std::optional<std::pair<double, double>> per_call =
      perCallCounts(r, r.target_rows, r.target_cols);
  if (!per_call) {
    r.unavailable = "the stepped calls do not give a per-call count";
    return r;
  }
  std::tie(r.instructions, r.vector) = *per_call;
  IssueWidth width = issueWidth();
  r.issue_width = width.width;
  r.issue_width_source = width.source;
  r.clock = measureCoreClock();
  r.clock_hz = clockHz(r.clock);
  if (!(r.clock_hz > 0)) {
    r.unavailable = "no core clock measurement on this architecture";
    return r;
  }
  r.seconds = r.vector / r.issue_width / r.clock_hz;
  return r;
}

void completeFloor(FloorRecord &floor, double time_s) {
  bool memory = floor.memory_unavailable.empty(), compute = floor.compute.unavailable.empty();
  floor.floor_s = std::max(memory ? floor.memory_s : 0.0, compute ? floor.compute.seconds : 0.0);
  // "memory only": the compute part is unavailable, so the floor may be low.
  if (memory && compute)
    floor.bound = floor.compute.seconds > floor.memory_s ? "compute" : "memory";
  else
    floor.bound = memory ? "memory only" : compute ? "compute only" : "none";
  floor.ratio = floor.floor_s > 0 ? time_s / floor.floor_s : 0;
  if (!(floor.floor_s > 0))
    floor.bound = "none";
}

} // namespace lanejit::bench
