// Python objects -> BufferRefs, without copying: numpy arrays and torch
// tensors (CPU, of the declared element type: float32, bfloat16, float16 or int8;
// unit column stride, any row stride) are passed by pointer, Python numbers
// as scalars. Anything else raises TypeError or ValueError naming the
// argument; nothing is ever copied or converted silently.
#pragma once

#include "torch_table.h"

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <pybind11/pybind11.h>

#include <array>
#include <string_view>

namespace lanejit::python {

namespace py = pybind11;

enum class ArrayLibrary { None, Numpy, Torch };

// What a call's arguments were bound to. Fixed capacity so a call does no
// heap allocation of its own; programs with more buffers are rejected.
struct BoundArguments {
  static constexpr int kMaxBuffers = 16;
  std::array<BufferRef, kMaxBuffers> inputs;
  std::array<BufferRef, kMaxBuffers> outputs;
  std::array<float, kMaxBuffers> scalars; // Python numbers, in the declared type's bits
  int input_count = 0, output_count = 0;
  ArrayLibrary library = ArrayLibrary::None; // of the first array input
  // The leading dimensions of the first row-tensor input (B, T of B x T x C),
  // which allocated outputs repeat.
  int leading_dims = 0;
  std::array<int64_t, kMaxDims> leading{};
};

// The torch adapter's table, imported the first time it can matter (torch
// is loaded), or null when torch is not loaded or the adapter was not built.
const TorchTable *torchTable();

// Binds inputs (a tuple of Python objects) to `program`'s declarations.
void bindInputs(const Program &program, py::handle args, size_t first, BoundArguments &bound);
// Binds `out` (an array, or a tuple/list with one entry per output) to the
// program's outputs; they must be writable.
void bindOutputs(const Program &program, py::handle out, BoundArguments &bound);
// Allocates every output for rows x cols, in the inputs' library (torch
// when an input was a torch tensor, else numpy) and its declared element
// type, shaped like the first row input's leading dimensions. Returns the
// array or a tuple of arrays.
py::object allocateOutputs(const Program &program, Shape shape, BoundArguments &bound);

} // namespace lanejit::python
