// Handing a call's rows to the pool: how many threads a call is worth (a
// cost model read from the lowered plan), the row blocks, and a workspace
// for every thread. Rows are independent, so where the blocks fall never
// changes a bit (docs/architecture.md, "Threads").
#pragma once

#include "lower/row_cost.h"

#include <lanejit/error.h>
#include <lanejit/launch_abi.h>
#include <lanejit/options.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

namespace lanejit::launch {

// Threads worth using for `rows` rows of `cost` at `cols`, at most `threads`
// (and not capped by `rows`: the column split may use more threads than
// rows): each must get at least minWorkNs() of work.
int threadsWorthUsing(const lower::RowCost &cost, int64_t rows, int64_t cols, int threads);
// The smallest work, in ns, worth handing to another thread (README,
// "Threads": a few times the measured dispatch latency). Tests set 0 to
// split every call that has more than one row.
double minWorkNs();
void setMinWorkNs(double ns);

// Changes whenever a setting that a call's launch decision reads changes
// (setMinWorkNs, the tests' rows-across-lanes hook): a remembered decision
// (Kernel::runEntry's last call) is then checked with one load.
inline std::atomic<uint64_t> g_launchSettingsEpoch{1};

// The thread count a call asks for: a per-call override (Kernel::run with
// threads), else options.threads, else affinityThreads().
int requestedThreads(const CompileOptions &options);
// Throws Error(kind) unless 1 <= threads <= kMaxThreads.
constexpr int kMaxThreads = 256;
void checkThreadCount(int threads, const char *where, Error::Kind kind = Error::Kind::Bind);

// Sets the per-call override for the calling thread while it lives.
class CallThreads {
public:
  explicit CallThreads(int threads);
  ~CallThreads();
  CallThreads(const CallThreads &) = delete;
  CallThreads &operator=(const CallThreads &) = delete;

private:
  int saved_;
};

// Where a call's column-split entry comes from: asked only when the call
// would split columns (the first ask may compile it); null when there is
// none. The kernel that owns the call implements it.
class PartEntrySource {
public:
  virtual lower::NativePartEntry partEntry() const = 0;

protected:
  ~PartEntrySource() = default;
};

// Runs `entry` over rows [0, args.rows) of `args` on up to `threads` threads
// (the cost model may use fewer), calling it on at most `block_rows` rows at
// a time. A thread's task is a run of such blocks, about kTasksPerThread
// tasks per thread. The calling thread uses args.workspace; each worker its
// own, of `workspace_floats` floats. When the call is worth more threads
// than it has rows and `part` is given, rows are split by column chunks
// instead (launch/column_split.h).
void launchRows(NativeEntry entry, const PartEntrySource *part, const LaunchArgs &args,
                int64_t workspace_floats, int64_t block_rows, int threads, const lower::RowCost &cost);

} // namespace lanejit::launch
