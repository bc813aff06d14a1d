// Kernel::run: check the call, protect against aliasing, hand out rows.
#include "launch/aligned_workspace.h"
#include "runtime/kernel_impl.h"

#include "lower/plan.h"
#include "runtime/binding.h"

#include <lanejit/bind.h>
#include <lanejit/error.h>

#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

namespace lanejit {
namespace {

constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();

struct ByteRange {
  uintptr_t begin = 0, end = 0; // [begin, end)
  bool overlaps(const ByteRange &o) const {
    return begin < end && o.begin < o.end && begin < o.end && o.begin < end;
  }
};

// The bytes the kernel can touch through a buffer bound to `shape` (row
// padding included between rows): a scalar is one float and a column
// vector one row, whatever rows/cols the caller wrote in its BufferRef.
// bindShape has checked the span fits, so byteSpan does not throw here.
ByteRange rangeOf(const BufferRef &b, ParamKind kind, Shape shape) {
  if (!b.data)
    return {};
  auto start = reinterpret_cast<uintptr_t>(b.data);
  if (kind == ParamKind::Scalar)
    return {start, start + sizeof(float)};
  int64_t rows = kind == ParamKind::RowTensor ? shape.rows : 1;
  return {start, start + static_cast<uintptr_t>(byteSpan(b, rows, "buffer"))};
}

std::string bufferLabel(const Program &p, bool output, size_t i) {
  return std::string(output ? "output '" : "input '") +
         (output ? p.outputs[i].name : p.inputs[i].name) + "'";
}

// A buffer's column indices are i32 inside the kernel too (its columns
// may be a multiple of C, or not depend on C at all).
void requireI32Columns(const BufferRef &b, const Program &p, bool output, size_t i) {
  if (b.cols > kMaxI32)
    throw Error(Error::Kind::Bind, bufferLabel(p, output, i) + ": " + std::to_string(b.cols) +
                                       " columns: column indices are 32-bit, at most 2^31 - 1");
}

// Whether an input is exactly an output: element (r, c) of one is element
// (r, c) of the other. The entry's guards handle that case itself.
bool exactlyAliased(const BufferRef &in, ParamKind kind, const BufferRef &out) {
  return kind == ParamKind::RowTensor && in.data == out.data && in.stride() == out.stride();
}

// Per-thread memory a call needs: copies of inputs that partially overlap
// an output (reading them while the kernel writes would see half-updated
// data), and the entry's workspace. Grown only when needed, so steady-state
// calls allocate nothing.
struct Arena {
  std::vector<std::vector<float>> staging;
  std::vector<float> workspace;
};
thread_local Arena arena;

// Every column offset and count the program uses must be a non-negative
// integer for `cols`: the entry's integer division would silently
// truncate. Column indices are i32 inside the kernel, so each must also
// fit in 31 bits (C does not bound 2*C). Throws the error naming the node.
void checkColumnRanges(const CompiledCode &code, int64_t cols) {
  if (cols > kMaxI32)
    throw Error(Error::Kind::Bind,
                "C = " + std::to_string(cols) + " columns: at most 2^31 - 1 are supported");
  for (const auto &[dim, what] : code.dims)
    if (int64_t v = evaluateDim(dim, cols, what); v > kMaxI32)
      throw Error(Error::Kind::Bind, dim.str() + " = " + std::to_string(v) +
                                         " for C = " + std::to_string(cols) + " (" + what +
                                         "): column indices are 32-bit, at most 2^31 - 1");
}

// The row index is i32 inside the kernel: a program that reads it cannot
// run more rows than that. Walked only for such a shape, off the common path.
void checkRowIndexRange(const Program &program, int64_t rows) {
  if (rows <= kMaxI32)
    return;
  bool readsRow = false;
  forEachNode(program,
              [&](const Expr &e) { readsRow = readsRow || e->kind == NodeKind::RowIndex; });
  if (readsRow)
    throw Error(Error::Kind::Bind, "R = " + std::to_string(rows) + " rows: program '" +
                                       program.name +
                                       "' reads the row index, which is 32-bit (at most 2^31 - 1)");
}

} // namespace

uint64_t nextSerial() {
  static std::atomic<uint64_t> serial{1};
  return serial++;
}

PreparedCall prepareCall(const Kernel::Impl &impl, std::span<const BufferRef> inputs,
                         std::span<const BufferRef> outputs) {
  const Program &program = impl.program;
  if (!impl.code->cannot_run_here.empty())
    throw Error(Error::Kind::Compile, impl.code->cannot_run_here);
  if (outputs.size() != program.outputs.size())
    throw Error(Error::Kind::Bind,
                "program '" + program.name + "' has " + std::to_string(program.outputs.size()) +
                    " outputs; the call passed " + std::to_string(outputs.size()));
  PreparedCall call;
  Shape shape = call.shape = bindShape(program, inputs, outputs);
  checkColumnRanges(*impl.code, shape.cols);
  checkRowIndexRange(program, shape.rows);

  std::array<ByteRange, kMaxBuffers> outRanges{};
  for (size_t i = 0; i < outputs.size(); ++i) {
    requireI32Columns(outputs[i], program, true, i);
    outRanges[i] = rangeOf(outputs[i], ParamKind::RowTensor, shape);
    for (size_t j = 0; j < i; ++j)
      if (outRanges[i].overlaps(outRanges[j]))
        throw Error(Error::Kind::Bind, bufferLabel(program, true, j) + " and " +
                                           bufferLabel(program, true, i) +
                                           " overlap; outputs must not share memory");
  }

  std::array<void *, kMaxBuffers> &buffers = call.buffers;
  std::array<int64_t, kMaxBuffers> &strides = call.strides;
  size_t n = 0;
  for (size_t i = 0; i < inputs.size(); ++i, ++n) {
    buffers[n] = inputs[i].data;
    strides[n] = inputs[i].stride();
    if (program.inputs[i].kind != ParamKind::Scalar)
      requireI32Columns(inputs[i], program, false, i);
    ByteRange in = rangeOf(inputs[i], program.inputs[i].kind, shape);
    bool partial = false;
    for (size_t j = 0; j < outputs.size(); ++j)
      partial = partial || (in.overlaps(outRanges[j]) &&
                            !exactlyAliased(inputs[i], program.inputs[i].kind, outputs[j]));
    if (!partial)
      continue;
    // Safe path for a partial overlap (a write to row r may land in a later
    // row of the input): the kernel reads a private copy of the whole input,
    // taken at every call (stageInputs). Exact aliasing is left to the
    // entry, which proves or guards it.
    call.staged |= uint64_t{1} << i;
    call.staged_bytes[i] = in.end - in.begin;
  }
  for (size_t i = 0; i < outputs.size(); ++i, ++n) {
    buffers[n] = outputs[i].data;
    strides[n] = outputs[i].stride();
  }
  call.count = n;
  // Column ranges were checked above, so the public workspaceFloats() check
  // need not run again on every call.
  call.workspace_floats = lower::workspaceFloats(impl.code->workspace, shape.cols);
  call.entry = entryFor(impl, shape.rows, shape.cols, /*now=*/false, &call.entry_settled);
  return call;
}

namespace {

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

} // namespace

void Kernel::run(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs) const {
  PreparedCall *call = lastCall.find(impl_->serial, inputs, outputs);
  if (!call)
    call = &lastCall.remember(impl_->serial, inputs, outputs, prepareCall(*impl_, inputs, outputs));
  else if (!call->entry_settled) // a repeated call: its C may now earn an entry
    call->entry =
        entryFor(*impl_, call->shape.rows, call->shape.cols, /*now=*/false, &call->entry_settled);
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

NativeEntry Kernel::nativeEntry() const {
  if (!impl_->code->cannot_run_here.empty())
    throw Error(Error::Kind::Compile, impl_->code->cannot_run_here);
  return impl_->code->entry;
}
NativeEntry Kernel::nativeEntry(int64_t rows, int64_t cols) const {
  nativeEntry(); // throws when the code cannot run here
  return entryFor(*impl_, rows, cols, /*now=*/true);
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

namespace runtime {
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

} // namespace
} // namespace runtime

// The first call of a shape (or after a settings change), and every call
// that splits across threads or runs several blocks.
void runtime::runEntryUncached(const Kernel::Impl &impl, const LaunchArgs &args, int threads) {
  launch::checkThreadCount(threads, "Kernel::runEntry");
  const CompiledCode &code = *impl.code;
  if (!code.cannot_run_here.empty())
    throw Error(Error::Kind::Compile, code.cannot_run_here);
  uint64_t epoch = launch::g_launchSettingsEpoch.load(std::memory_order_relaxed);
  bool settled = false;
  NativeEntry entry = entryFor(impl, args.rows, args.cols, /*now=*/true, &settled);
  int64_t block = impl.options.block_rows;
  // The serial call's whole overhead: the cost model's multiply-add and
  // compare; the workers' workspace size only when there are workers.
  if (launch::threadsWorthUsing(code.row_cost, args.rows, args.cols, threads) <= 1) {
    for (int64_t r = 0; r < args.rows; r += block)
      entry(&args, r, std::min(args.rows, r + block));
    if (settled && args.rows <= block)
      runtime::t_lastRunEntry = {impl.serial, args.rows, args.cols, threads, epoch, entry};
    return;
  }
  launch::launchRows(entry, &impl, args, lower::workspaceFloats(code.workspace, args.cols), block,
                     threads, code.row_cost);
}

// Kept small, with the rest out of line, so a repeated call is a thread-local
// look-up, five compares and a tail call to the entry.
void Kernel::runEntry(const LaunchArgs &args, int threads) const {
  const runtime::LastRunEntry &last = runtime::t_lastRunEntry;
  if (last.kernel == impl_->serial && last.rows == args.rows && last.cols == args.cols &&
      last.threads == threads &&
      last.epoch == launch::g_launchSettingsEpoch.load(std::memory_order_relaxed)) [[likely]]
    return last.entry(&args, 0, args.rows);
  runtime::runEntryUncached(*impl_, args, threads);
}

} // namespace lanejit
