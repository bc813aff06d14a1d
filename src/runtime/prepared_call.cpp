// A call's checks and argument arrays, and run()'s memory of its last call
// (runtime/prepared_call.h).
#include "runtime/prepared_call.h"

#include "lower/plan.h"
#include "runtime/entry_choice.h"

#include <lanejit/error.h>
#include <lanejit/shape_binding.h>

#include <cstring>
#include <limits>

namespace lanejit {
namespace {

constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();

struct ByteRange {
  uintptr_t begin = 0, end = 0; // [begin, end)
  bool overlaps(const ByteRange &o) const {
    return begin < end && o.begin < o.end && begin < o.end && o.begin < end;
  }
};

// The bytes the kernel can touch through a buffer of `type` bound to `shape`
// (row padding included between rows): a scalar is one element and a
// column vector one row, whatever rows/cols the caller wrote in its
// BufferRef. bindShape has checked the span fits, so byteSpan does not
// throw here.
ByteRange rangeOf(const BufferRef &b, ParamKind kind, DType type, Shape shape) {
  if (!b.data)
    return {};
  auto start = reinterpret_cast<uintptr_t>(b.data);
  if (kind == ParamKind::Scalar)
    return {start, start + static_cast<uintptr_t>(bytesOf(type))};
  int64_t rows = kind == ParamKind::RowTensor ? shape.rows : 1;
  return {start, start + static_cast<uintptr_t>(byteSpan(b, rows, bytesOf(type), "buffer"))};
}

enum class Side { Input, Output };

std::string bufferLabel(const Program &p, Side side, size_t i) {
  bool output = side == Side::Output;
  return std::string(output ? "output '" : "input '") +
         (output ? p.outputs[i].name : p.inputs[i].name) + "'";
}

// A buffer's column indices are i32 inside the kernel too (its columns
// may be a multiple of C, or not depend on C at all).
void requireI32Columns(const BufferRef &b, const Program &p, Side side, size_t i) {
  if (b.cols > kMaxI32)
    throw Error(Error::Kind::Bind, bufferLabel(p, side, i) + ": " + std::to_string(b.cols) +
                                       " columns: column indices are 32-bit, at most 2^31 - 1");
}

// Whether an input is exactly an output (lower::canAliasExactly, and the
// same address and row stride). The entry's guards handle that case
// itself; any other overlap is staged.
bool exactlyAliased(const BufferRef &in, const Param &decl, const BufferRef &out,
                    const Output &outDecl) {
  return lower::canAliasExactly(decl, outDecl) && in.data == out.data &&
         in.stride() == out.stride();
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

bool sameRefs(const BufferRef *a, std::span<const BufferRef> b) {
  return b.empty() || std::memcmp(a, b.data(), b.size() * sizeof(BufferRef)) == 0;
}

} // namespace

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

PreparedCall *LastCall::find(uint64_t kernel, std::span<const BufferRef> inputs,
                             std::span<const BufferRef> outputs) {
  if (kernel != kernel_ || inputs.size() != inputs_ || outputs.size() != outputs_ ||
      !sameRefs(refs_.data(), inputs) || !sameRefs(refs_.data() + inputs_, outputs))
    return nullptr;
  return &call_;
}

PreparedCall &LastCall::remember(uint64_t kernel, std::span<const BufferRef> inputs,
                                 std::span<const BufferRef> outputs, const PreparedCall &call) {
  kernel_ = kernel;
  inputs_ = inputs.size();
  outputs_ = outputs.size();
  std::copy(inputs.begin(), inputs.end(), refs_.begin());
  std::copy(outputs.begin(), outputs.end(), refs_.begin() + inputs_);
  call_ = call;
  return call_;
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
    requireI32Columns(outputs[i], program, Side::Output, i);
    outRanges[i] = rangeOf(outputs[i], ParamKind::RowTensor, program.outputs[i].type, shape);
    for (size_t j = 0; j < i; ++j)
      if (outRanges[i].overlaps(outRanges[j]))
        throw Error(Error::Kind::Bind, bufferLabel(program, Side::Output, j) + " and " +
                                           bufferLabel(program, Side::Output, i) +
                                           " overlap; outputs must not share memory");
  }

  std::array<void *, kMaxBuffers> &buffers = call.buffers;
  std::array<int64_t, kMaxBuffers> &strides = call.strides;
  size_t n = 0;
  for (size_t i = 0; i < inputs.size(); ++i, ++n) {
    buffers[n] = inputs[i].data;
    strides[n] = inputs[i].stride();
    if (program.inputs[i].kind != ParamKind::Scalar)
      requireI32Columns(inputs[i], program, Side::Input, i);
    const Param &decl = program.inputs[i];
    ByteRange in = rangeOf(inputs[i], decl.kind, decl.type, shape);
    bool partial = false;
    for (size_t j = 0; j < outputs.size(); ++j)
      partial = partial ||
                (in.overlaps(outRanges[j]) &&
                 !exactlyAliased(inputs[i], decl, outputs[j], program.outputs[j]));
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
  call.entry =
      entryFor(impl, shape.rows, shape.cols, cache::BuildWhen::OnRepeat, &call.entry_settled);
  return call;
}

} // namespace lanejit
