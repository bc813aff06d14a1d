// Kernel's methods, in one place: compile(), run() (check the call,
// protect against aliasing, hand out rows), bind(), runEntry(), the
// accessors and dumps.
#include "kernel/kernel_impl.h"

#include "driver/compiled_code.h"
#include "launch/aligned_workspace.h"
#include "lower/choose_mapping.h"
#include "lower/plan.h"
#include "runtime/entry_choice.h"
#include "runtime/prepared_call.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <array>
#include <cstring>
#include <vector>

namespace lanejit {
namespace {

// Per-thread memory a call needs: copies of inputs that partially overlap
// an output (reading them while the kernel writes would see half-updated
// data), and the entry's workspace. Grown only when needed, so steady-state
// calls allocate nothing.
struct Arena {
  std::vector<std::vector<float>> staging;
  std::vector<float> workspace;
};
thread_local Arena arena;

// The per-call copies of partially overlapping inputs, in this thread's
// arena; `buffers` gets the copies' addresses.
void stageInputs(const PreparedCall &call, std::array<void *, kMaxBuffers> &buffers) {
  for (size_t i = 0; i < call.count; ++i) {
    if (!(call.staged >> i & 1))
      continue;
    if (arena.staging.size() <= i)
      arena.staging.resize(i + 1);
    std::vector<float> &copy = arena.staging[i];
    size_t bytes = call.staged_bytes[i];
    if (copy.size() * sizeof(float) < bytes)
      copy.resize((bytes + sizeof(float) - 1) / sizeof(float));
    std::memcpy(copy.data(), call.buffers[i], bytes);
    buffers[i] = copy.data();
  }
}

thread_local LastCall lastCall;

// What a BoundCall owns: its argument arrays, workspace and copies, and the
// kernel's code.
struct BoundState {
  PreparedCall call;
  std::vector<float> workspace;
  std::vector<std::vector<float>> copies; // per staged input
  std::vector<const void *> sources;      // per staged input
  std::shared_ptr<const CompiledCode> code;
};

} // namespace

void Kernel::run(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs) const {
  PreparedCall *call = lastCall.find(impl_->serial, inputs, outputs);
  if (!call)
    call = &lastCall.remember(impl_->serial, inputs, outputs, prepareCall(*impl_, inputs, outputs));
  else if (!call->entry_settled) // a repeated call: its C may now earn an entry
    call->entry = entryFor(*impl_, call->shape.rows, call->shape.cols, cache::BuildWhen::OnRepeat,
                           &call->entry_settled);
  Shape shape = call->shape;
  void *const *buffers = call->buffers.data();
  std::array<void *, kMaxBuffers> staged;
  if (call->staged) {
    std::copy(call->buffers.begin(), call->buffers.begin() + call->count, staged.begin());
    stageInputs(*call, staged);
    buffers = staged.data();
  }
  int64_t wsFloats = call->workspace_floats;
  float *workspace = wsFloats ? launch::alignedWorkspace(arena.workspace, wsFloats) : nullptr;
  LaunchArgs args{buffers, call->strides.data(), shape.rows, shape.cols, workspace};
  launch::launchRows(call->entry, impl_.get(), args, wsFloats,
                      impl_->options.block_rows, launch::requestedThreads(impl_->options),
                      impl_->code->row_cost);
}

void Kernel::run(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs,
                 int threads) const {
  launch::CallThreads scope(threads);
  run(inputs, outputs);
}

BoundCall Kernel::bind(std::span<const BufferRef> inputs,
                       std::span<const BufferRef> outputs) const {
  auto state = std::make_shared<BoundState>();
  state->call = prepareCall(*impl_, inputs, outputs);
  // A bound call is made to be called many times: its C's entry now.
  state->call.entry =
      entryFor(*impl_, state->call.shape.rows, state->call.shape.cols, cache::BuildWhen::Now);
  state->code = impl_->code;
  PreparedCall &c = state->call;
  BoundCall bound;
  float *workspace = nullptr;
  if (c.workspace_floats) {
    constexpr uintptr_t align = LANEJIT_WORKSPACE_ALIGN_BYTES;
    state->workspace.resize(static_cast<size_t>(c.workspace_floats) + align / sizeof(float));
    auto p = reinterpret_cast<uintptr_t>(state->workspace.data());
    workspace = reinterpret_cast<float *>((p + align - 1) & ~(align - 1));
  }
  state->copies.resize(inputs.size());
  state->sources.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (c.staged >> i & 1) {
      state->sources[i] = c.buffers[i];
      state->copies[i].resize((c.staged_bytes[i] + sizeof(float) - 1) / sizeof(float));
      c.buffers[i] = state->copies[i].data();
      bound.staged_ = true;
    }
  bound.entry_ = c.entry;
  bound.args_ = {c.buffers.data(), c.strides.data(), c.shape.rows, c.shape.cols, workspace};
  bound.rows_ = c.shape.rows;
  bound.block_ = impl_->options.block_rows;
  bound.state_ = std::move(state);
  return bound;
}

void BoundCall::stage() const {
  auto *state = static_cast<BoundState *>(state_.get());
  const PreparedCall &c = state->call;
  for (size_t i = 0; i < state->copies.size(); ++i)
    if (c.staged >> i & 1)
      std::memcpy(state->copies[i].data(), state->sources[i], c.staged_bytes[i]);
}

NativeEntry Kernel::nativeEntry() const {
  if (!impl_->code->cannot_run_here.empty())
    throw Error(Error::Kind::Compile, impl_->code->cannot_run_here);
  return impl_->code->entry;
}
NativeEntry Kernel::nativeEntry(int64_t rows, int64_t cols) const {
  nativeEntry(); // throws when the code cannot run here
  return entryFor(*impl_, rows, cols, cache::BuildWhen::Now);
}
int64_t Kernel::workspaceFloats(int64_t cols) const {
  // The entry would index past a size computed from a Dim that is not a
  // whole number for this C (C/2 at odd C): refuse, as run() does.
  checkColumnRanges(*impl_->code, cols);
  return lower::workspaceFloats(impl_->code->workspace, cols);
}
const std::vector<Dim> &Kernel::workspaceSlots() const {
  return impl_->code->workspace;
}
const Program &Kernel::program() const {
  return impl_->program;
}
const CompileOptions &Kernel::options() const {
  return impl_->options;
}

namespace {

// This thread's last runEntry call that ran as one block on the calling
// thread: a loop of calls with one shape (a prepared caller, the bench)
// then pays one look-up and a few compares, not the thread check, entry
// look-up and cost model (which put RoPE 17x66 on two threads 7% behind
// the bare entry). Keyed by everything those read: the kernel (by serial,
// never reused), the shape, the thread count, and the epoch of the cost
// model's threshold and the tests' rows-across-lanes hook.
struct LastRunEntry {
  uint64_t kernel = 0; // 0: nothing kept
  int64_t rows = 0, cols = 0;
  int threads = 0;
  uint64_t epoch = 0;
  NativeEntry entry = nullptr;
};
thread_local LastRunEntry t_lastRunEntry;

// runEntry past its remembered last call, for the first call of a shape (or
// after a settings change) and every call that splits across threads or
// runs several blocks: checks, picks the entry for the shape, and runs it
// serially (remembering it) or on the pool. Out of line: runEntry stays a
// few instructions.
[[gnu::noinline]] void runEntryUncached(const Kernel::Impl &impl, const LaunchArgs &args,
                                        int threads) {
  launch::checkThreadCount(threads, "Kernel::runEntry");
  const CompiledCode &code = *impl.code;
  if (!code.cannot_run_here.empty())
    throw Error(Error::Kind::Compile, code.cannot_run_here);
  uint64_t epoch = launch::g_launchSettingsEpoch.load(std::memory_order_relaxed);
  bool settled = false;
  NativeEntry entry = entryFor(impl, args.rows, args.cols, cache::BuildWhen::Now, &settled);
  int64_t block = impl.options.block_rows;
  // The serial call's whole overhead: the cost model's multiply-add and
  // compare; the workers' workspace size only when there are workers.
  if (launch::threadsWorthUsing(code.row_cost, args.rows, args.cols, threads) <= 1) {
    for (int64_t r = 0; r < args.rows; r += block)
      entry(&args, r, std::min(args.rows, r + block));
    if (settled && args.rows <= block)
      t_lastRunEntry = {impl.serial, args.rows, args.cols, threads, epoch, entry};
    return;
  }
  launch::launchRows(entry, &impl, args, lower::workspaceFloats(code.workspace, args.cols), block,
                     threads, code.row_cost);
}

} // namespace

// Kept small, with the rest out of line, so a repeated call is a thread-local
// look-up, five compares and a tail call to the entry.
void Kernel::runEntry(const LaunchArgs &args, int threads) const {
  const LastRunEntry &last = t_lastRunEntry;
  if (last.kernel == impl_->serial && last.rows == args.rows && last.cols == args.cols &&
      last.threads == threads &&
      last.epoch == launch::g_launchSettingsEpoch.load(std::memory_order_relaxed)) [[likely]]
    return last.entry(&args, 0, args.rows);
  runEntryUncached(*impl_, args, threads);
}

Kernel compile(const Program &program, const CompileOptions &options) {
  return Kernel(compileImpl(program, options));
}

const CompileReport &Kernel::report() const {
  return impl_->report;
}
const std::string &Kernel::object() const {
  return impl_->code->object;
}
const std::string &Kernel::entrySymbol() const {
  return impl_->code->entry_symbol;
}

std::string Kernel::dump(const std::string &stage) const {
  if (stage == "ir")
    return print(impl_->code->lowered);
  if (stage == "plan")
    return impl_->code->plan;
  if (stage == "passes")
    return impl_->code->pass_log;
  if (stage != "llvm" && stage != "llvm-unoptimized" && stage != "asm")
    throw Error(Error::Kind::Compile, "unknown dump stage '" + stage +
                                          "' (passes, ir, plan, llvm-unoptimized, llvm, asm)");
  return driver::dumpEntry(impl_->program, impl_->options, stage, driver::EntryKind::Generic);
}

namespace {

// The checks of a dump of one C's entry: `what` names the entry kind in
// the messages, `maxCols` the largest C such an entry exists for.
void checkEntryDump(const std::string &stage, int64_t cols, const std::string &what,
                    const std::string &colsRule, int64_t maxCols) {
  if (stage != "llvm" && stage != "llvm-unoptimized" && stage != "asm")
    throw Error(Error::Kind::Compile, what + " has only the code stages " +
                                          "(llvm-unoptimized, llvm, asm), not '" + stage + "'");
  if (cols < 1 || cols > maxCols)
    throw Error(Error::Kind::Compile, colsRule + " 1 to " + std::to_string(maxCols) +
                                          " columns, not " + std::to_string(cols));
}

} // namespace

std::string Kernel::dump(const std::string &stage, int64_t cols) const {
  checkEntryDump(stage, cols, "a dump for one C", "entries are specialised for",
                 cache::kMaxSpecializedColumns);
  return driver::dumpEntry(impl_->program, impl_->options, stage, driver::EntryKind::Columns,
                           cols);
}

std::string Kernel::dumpRowsAcrossLanes(const std::string &stage, int64_t cols) const {
  checkEntryDump(stage, cols, "a rows-across-lanes dump", "rows across lanes takes",
                 lower::kMaxRowsAcrossLanesColumns);
  if (std::string why = lower::rowsAcrossLanesUnavailable(impl_->program); !why.empty())
    throw Error(Error::Kind::Compile, "no rows-across-lanes entry for program '" +
                                          impl_->program.name + "': it " + why);
  return driver::dumpEntry(impl_->program, impl_->options, stage,
                           driver::EntryKind::RowsAcrossLanes, cols);
}

} // namespace lanejit
