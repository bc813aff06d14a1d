// The interface between the core module (_lanejit) and the torch adapter
// (_lanejit_torch). The adapter links libtorch and reads an at::Tensor's
// fields directly, which is what makes a torch call cheap; the core module
// does not link libtorch, so `import lanejit` stays fast for numpy users
// and loads the adapter only once torch itself has been imported.
#pragma once

#include <Python.h>

#include <cstdint>

namespace lanejit::python {

constexpr int kMaxDims = 8;

struct TensorView {
  void *data = nullptr;
  int dims = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims]; // elements
  bool is_float32 = false;
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
  // A new dense float32 CPU tensor of the given shape (new reference) and
  // its data in *data, or null with a Python error set.
  PyObject *(*empty)(const int64_t *sizes, int dims, void **data);
};

constexpr const char *kTorchTableCapsule = "lanejit._lanejit_torch.table";

} // namespace lanejit::python
