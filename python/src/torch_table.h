// The interface between the core module (_lanejit) and the torch adapter
// (_lanejit_torch). The adapter links libtorch and reads an at::Tensor's
// fields directly, which is what makes a torch call cheap; the core module
// does not link libtorch, so `import lanejit` stays fast for numpy users
// and loads the adapter only once torch itself has been imported.
#pragma once

#include <Python.h>

#include <lanejit/buffer.h>

#include <cstddef>
#include <cstdint>

namespace lanejit::python {

constexpr int kMaxDims = 8;

// A tensor's element type as far as kernels care: the buffer types
// (lanejit::DType's F32, BF16, F16, I8) or anything else. Its own enum so the
// adapter needs no lanejit header but buffer.h.
enum class TensorElement : uint8_t { Other, F32, BF16, F16, I8 };

struct TensorView {
  void *data = nullptr;
  int dims = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims]; // elements
  TensorElement element = TensorElement::Other;
  bool on_cpu = false;
  bool needs_grad = false; // requires_grad while grad mode is on
  bool strided = false;    // dense layout (not sparse, mkldnn, ...): sizes and strides are set
  const char *dtype = "";  // for messages
  const char *device = ""; // for messages
};

struct TorchTable {
  // 1 and fills `view` when `object` is a torch.Tensor, 0 when it is not;
  // never raises.
  int (*view)(PyObject *object, TensorView *view);
  // A new dense CPU tensor of the given shape and element type (not Other;
  // new reference) and its data in *data, or null with a Python error set.
  PyObject *(*empty)(const int64_t *sizes, int dims, TensorElement element, void **data);
  // 1 while CPU autocast is on (torch.autocast("cpu")): the ops of a traced
  // forward then give other dtypes than when its entry was registered.
  int (*autocast)();
};

constexpr const char *kTorchTableCapsule = "lanejit._lanejit_torch.table";

// The other way round: what the adapter's `lanejit::row_program` operator
// (python/torch/row_program_op.cpp) calls in the core module to run a
// compiled kernel, so the adapter links no lanejit code of its own.
struct KernelRunner {
  // Runs the lanejit::Kernel at `kernel` (Kernel._address) on the buffers
  // with its compile-time thread count. 0 on success; else 1 with a message
  // in error (NUL-terminated, at most error_size bytes). Needs no GIL.
  int (*run)(const void *kernel, const BufferRef *inputs, int input_count,
             const BufferRef *outputs, int output_count, char *error, size_t error_size);
};

constexpr const char *kKernelRunnerCapsule = "lanejit._lanejit._kernel_runner";

} // namespace lanejit::python
