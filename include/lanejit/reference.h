// lanejit/reference.h — the FP64 oracle.
//
// Evaluates a Program straight from the IR in double precision, without
// LLVM: every f32 input value and constant is widened exactly, every
// operation (exp, tanh, ...) is the libm double one, reductions are plain
// sequential sums. Tests and the benchmark compare compiled kernels with it.
#pragma once

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <span>
#include <vector>

namespace lanejit {

struct ReferenceOutput {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> values; // dense [rows, cols]
  double at(int64_t r, int64_t c) const { return values[r * cols + c]; }
};

// inputs: one BufferRef per Program::inputs entry, of its declared type
// (bf16 and f16 elements widen exactly). The shape is
// bound the same way Kernel::run binds it (see shape_binding.h).
std::vector<ReferenceOutput> evaluateReference(const Program &program,
                                               std::span<const BufferRef> inputs, Shape shape);

} // namespace lanejit
