// _lanejit_torch: reads torch tensors for the core module (torch_table.h),
// and defines the lanejit::row_program operator (row_program_op.cpp).
// Built only when libtorch's Python headers are present; imported by the
// core module the first time it sees an argument that is not a numpy array
// or a number while torch is loaded.
#include "torch_table.h"

#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstring>

namespace {

using lanejit::python::TensorElement;
using lanejit::python::TensorView;

TensorElement elementOf(at::ScalarType type) {
  switch (type) {
  case at::kFloat: return TensorElement::F32;
  case at::kBFloat16: return TensorElement::BF16;
  case at::kHalf: return TensorElement::F16;
  case at::kChar: return TensorElement::I8;
  default: return TensorElement::Other;
  }
}

// torch's own name for the types a message is likely to show.
const char *dtypeName(at::ScalarType type) {
  switch (type) {
  case at::kFloat: return "torch.float32";
  case at::kDouble: return "torch.float64";
  case at::kHalf: return "torch.float16";
  case at::kBFloat16: return "torch.bfloat16";
  case at::kChar: return "torch.int8"; // c10 calls it "Char"
  case at::kByte: return "torch.uint8";
  default: return c10::toString(type);
  }
}

at::ScalarType scalarTypeOf(TensorElement element) {
  return element == TensorElement::BF16  ? at::kBFloat16
         : element == TensorElement::F16 ? at::kHalf
         : element == TensorElement::I8  ? at::kChar
                                         : at::kFloat;
}

int viewTensor(PyObject *object, TensorView *view) {
  if (!THPVariableClass)
    return 0;
  int is_tensor = PyObject_IsInstance(object, THPVariableClass);
  if (is_tensor <= 0) {
    PyErr_Clear();
    return 0;
  }
  const at::Tensor &t = THPVariable_Unpack(object);
  view->element = elementOf(t.scalar_type());
  view->on_cpu = t.device().is_cpu();
  view->needs_grad = t.requires_grad() && at::GradMode::is_enabled();
  view->dtype = dtypeName(t.scalar_type());
  view->device = view->on_cpu ? "cpu" : t.device().is_cuda() ? "cuda" : "non-CPU";
  view->strided = t.layout() == at::kStrided;
  if (!view->strided)
    return 1; // the caller refuses it; strides() would throw
  // The arrays at once (size(i)/stride(i) wrap and check every index).
  at::IntArrayRef sizes = t.sizes(), strides = t.strides();
  int64_t dims = static_cast<int64_t>(sizes.size());
  view->dims = static_cast<int>(dims);
  if (dims > lanejit::python::kMaxDims)
    return 1; // the caller reports the rank
  std::memcpy(view->sizes, sizes.data(), dims * sizeof(int64_t));
  std::memcpy(view->strides, strides.data(), dims * sizeof(int64_t));
  // data_ptr() of a tensor without storage (meta) throws; such a tensor is
  // not on the CPU and is rejected before data is used.
  view->data = view->on_cpu && t.has_storage() ? t.data_ptr() : nullptr;
  return 1;
}

PyObject *emptyTensor(const int64_t *sizes, int dims, TensorElement element, void **data) {
  try {
    // The CPU allocator directly, not through the dispatcher: a call's
    // output costs less (at::empty would give the same tensor).
    at::TensorBase t = at::detail::empty_cpu(at::IntArrayRef(sizes, dims), scalarTypeOf(element),
                                             /*pin_memory=*/false, c10::nullopt);
    *data = t.data_ptr();
    return THPVariable_Wrap(std::move(t));
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

int autocastOn() {
  return at::autocast::is_autocast_enabled(at::kCPU);
}

lanejit::python::TorchTable table{viewTensor, emptyTensor, autocastOn};

} // namespace

void defineRowProgram(py::module_ &m); // row_program_op.cpp

PYBIND11_MODULE(_lanejit_torch, m) {
  m.attr("table") = py::capsule(&table, lanejit::python::kTorchTableCapsule);
  defineRowProgram(m);
}
