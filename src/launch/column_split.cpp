// Column chunks across the pool (launch/column_split.h).
#include "launch/column_split.h"

#include "launch/aligned_workspace.h"

#include "launch/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace lanejit::launch {
namespace {

std::atomic<bool> g_forced{false};

// The caller's buffers for a split call: the workspaces of rows 1.. (row 0
// uses args.workspace) and the partials. They grow once and are reused.
thread_local std::vector<float> t_rowWorkspaces, t_partials;
thread_local std::vector<LaunchArgs> t_rowArgs;

// Whether an output shares a byte with an input row tensor or another
// output (over the rows' whole span, stride gaps included: conservative).
bool outputsOverlap(const LaunchArgs &args, const lower::RowCost &cost) {
  struct Span {
    uintptr_t begin = 0, end = 0;
  };
  size_t count = cost.row_tensor_cols.size();
  std::vector<Span> spans(count);
  for (size_t i = 0; i < count; ++i) {
    if (!cost.row_tensor_cols[i])
      continue;
    int64_t width = cost.row_tensor_cols[i]->evaluate(args.cols).value_or(args.cols);
    int64_t floats = (args.rows - 1) * args.row_strides[i] + width;
    auto begin = reinterpret_cast<uintptr_t>(args.buffers[i]);
    spans[i] = {begin, begin + static_cast<uintptr_t>(std::max<int64_t>(floats, 0)) * 4};
  }
  // Inputs may overlap each other: they are only read.
  for (size_t o = static_cast<size_t>(cost.inputs); o < count; ++o)
    for (size_t i = 0; i < count; ++i) {
      const Span &a = spans[o], &b = spans[i];
      if (i != o && a.begin < a.end && b.begin < b.end && a.begin < b.end && b.begin < a.end)
        return true;
    }
  return false;
}

struct PhaseJob {
  lower::NativePartEntry part;
  const LaunchArgs *rowArgs; // per row: the row's own workspace
  int64_t phase;
  int64_t chunks;      // of this phase's traversal
  int64_t pieceChunks; // chunks per task
  int64_t pieces;      // tasks per row
  float *partials;     // row r's at partials + r * rowPartials
  int64_t rowPartials;
  int64_t partialChunks;
};

void runPiece(void *ctx, int64_t task) noexcept {
  const PhaseJob &job = *static_cast<const PhaseJob *>(ctx);
  int64_t row = task / job.pieces, piece = task % job.pieces;
  lower::PartArgs p;
  p.row = row;
  p.phase = job.phase;
  p.chunk_begin = piece * job.pieceChunks;
  p.chunk_end = std::min(job.chunks, p.chunk_begin + job.pieceChunks);
  p.partials = job.partials + row * job.rowPartials;
  p.partial_chunks = job.partialChunks;
  job.part(&job.rowArgs[row], &p);
}

} // namespace

bool forcedColumnSplit() {
  return g_forced.load(std::memory_order_relaxed);
}
void setForcedColumnSplit(bool on) {
  g_forced.store(on, std::memory_order_relaxed);
}

bool launchColumns(const PartEntrySource &source, const LaunchArgs &args, int64_t workspace_floats, int threads,
                   const lower::RowCost &cost) {
  if (args.rows <= 0 || threads <= 1)
    return false;
  std::vector<int64_t> chunks;
  int64_t most = 1;
  for (const lower::RowCost::Pass &pass : cost.passes) {
    chunks.push_back(lower::chunksOf(pass.len.evaluate(args.cols).value_or(args.cols)));
    most = std::max(most, chunks.back());
  }
  if ((most < 2 && !forcedColumnSplit()) || outputsOverlap(args, cost))
    return false;
  lower::NativePartEntry part = source.partEntry();
  if (!part)
    return false;

  int64_t rows = args.rows;
  int64_t rowFloats = (workspace_floats + 15) / 16 * 16; // keeps every row's 64-byte aligned
  float *workspaces =
      rows > 1 && rowFloats ? alignedWorkspace(t_rowWorkspaces, (rows - 1) * rowFloats) : nullptr;
  t_rowArgs.assign(static_cast<size_t>(rows), args);
  for (int64_t r = 1; r < rows && rowFloats; ++r)
    t_rowArgs[r].workspace = workspaces + (r - 1) * rowFloats;
  int64_t rowPartials = int64_t(cost.reductions) * most * lower::kReductionLanes;
  float *partials = rowPartials ? alignedWorkspace(t_partials, rows * rowPartials) : nullptr;

  // Small tasks (one chunk each, or at least eight per thread per phase):
  // a thread descheduled on a shared machine holds back the barrier by at
  // most one chunk's work, and the others take the rest.
  int64_t perRow = std::max<int64_t>(1, (8 * threads + rows - 1) / rows);
  for (size_t phase = 0; phase < chunks.size(); ++phase) {
    int64_t pieceChunks = std::max<int64_t>(1, (chunks[phase] + perRow - 1) / perRow);
    int64_t pieces = (chunks[phase] + pieceChunks - 1) / pieceChunks;
    PhaseJob job{part,   t_rowArgs.data(), int64_t(phase), chunks[phase], pieceChunks,
                 pieces, partials,         rowPartials,    most};
    // The barrier: a phase's partials and workspace values are complete
    // when parallelFor returns.
    parallelFor(rows * pieces, threads, runPiece, &job);
  }
  return true;
}

} // namespace lanejit::launch
