// Row blocks across the pool (launch/row_launch.h).
#include "launch/row_launch.h"

#include "launch/aligned_workspace.h"
#include "launch/column_split.h"
#include "launch/thread_pool.h"

#include <lanejit/error.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>

namespace lanejit::launch {
namespace {

thread_local int t_callThreads = 0; // 0: no per-call override
std::atomic<double> g_minWorkNs{20000};

// The worker's own workspace (the caller's comes with the args); grows
// once, so steady-state calls allocate nothing.
thread_local std::vector<float> t_workspace;

// Tasks per thread a row split aims at: enough that a thread slowed by the
// machine's other load leaves little for the rest to wait on, few enough
// that claiming a task (a counter every thread updates) stays small beside
// its rows (a 32-row block of 8 columns is about 50 ns of work, less than a
// contended claim).
constexpr int64_t kTasksPerThread = 8;

struct RowJob {
  NativeEntry entry;
  const LaunchArgs *args;
  int64_t workspace_floats;
  int64_t task_rows; // rows per task, a multiple of block unless it is the last
  int64_t block;     // rows per entry call
  std::thread::id caller;
};

void runTask(void *ctx, int64_t task) noexcept {
  const RowJob &job = *static_cast<const RowJob *>(ctx);
  int64_t begin = task * job.task_rows;
  int64_t end = std::min(job.args->rows, begin + job.task_rows);
  LaunchArgs own;
  const LaunchArgs *args = job.args;
  if (std::this_thread::get_id() != job.caller && job.workspace_floats != 0) {
    own = *job.args;
    own.workspace = alignedWorkspace(t_workspace, job.workspace_floats);
    args = &own;
  }
  for (int64_t r = begin; r < end; r += job.block)
    job.entry(args, r, std::min(end, r + job.block));
}

} // namespace

int threadsWorthUsing(const lower::RowCost &cost, int64_t rows, int64_t cols, int threads) {
  if (threads <= 1)
    return 1;
  double total = lower::rowNanoseconds(cost, cols) * static_cast<double>(rows);
  double min = minWorkNs();
  if (total < 2 * min) // the common small call: one multiply-add and a compare
    return 1;
  double worth = min > 0 ? std::floor(total / min) : threads;
  return static_cast<int>(std::clamp<double>(worth, 1, threads));
}

double minWorkNs() {
  return g_minWorkNs.load(std::memory_order_relaxed);
}
void setMinWorkNs(double ns) {
  g_minWorkNs.store(ns, std::memory_order_relaxed);
  g_launchSettingsEpoch.fetch_add(1, std::memory_order_relaxed);
}

void checkThreadCount(int threads, const char *where, Error::Kind kind) {
  if (threads < 1 || threads > kMaxThreads)
    throw Error(kind, std::string(where) + ": " + std::to_string(threads) +
                          " threads: a thread count must be in [1, " + std::to_string(kMaxThreads) +
                          "]");
}

int requestedThreads(const CompileOptions &options) {
  if (t_callThreads > 0)
    return t_callThreads;
  if (options.threads)
    return *options.threads;
  static const int affinity = affinityThreads();
  return affinity;
}

CallThreads::CallThreads(int threads) : saved_(t_callThreads) {
  checkThreadCount(threads, "Kernel::run");
  t_callThreads = threads;
}
CallThreads::~CallThreads() {
  t_callThreads = saved_;
}

void launchRows(NativeEntry entry, const PartEntrySource *part, const LaunchArgs &args,
                int64_t workspace_floats, int64_t block_rows, int threads, const lower::RowCost &cost) {
  auto serial = [&] {
    for (int64_t r = 0; r < args.rows; r += block_rows)
      entry(&args, r, std::min(args.rows, r + block_rows));
  };
  int use = threadsWorthUsing(cost, args.rows, args.cols, threads);
  if (use <= 1 || insidePoolTask())
    return serial();
  if ((use > args.rows || forcedColumnSplit()) && part &&
      launchColumns(*part, args, workspace_floats, use, cost))
    return;
  use = static_cast<int>(std::min<int64_t>(use, args.rows));
  if (use <= 1)
    return serial();
  // Blocks of block_rows, smaller when that leaves a thread without one;
  // tasks of whole blocks, about kTasksPerThread per thread.
  int64_t block = std::max<int64_t>(1, std::min(block_rows, (args.rows + use - 1) / use));
  int64_t blocks = (args.rows + block - 1) / block;
  int64_t tasks = std::min(blocks, use * kTasksPerThread);
  int64_t task_rows = (blocks + tasks - 1) / tasks * block;
  RowJob job{entry, &args, workspace_floats, task_rows, block, std::this_thread::get_id()};
  parallelFor((args.rows + task_rows - 1) / task_rows, use, runTask, &job);
}

} // namespace lanejit::launch
