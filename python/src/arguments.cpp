// Python objects -> BufferRefs (arguments.h). The per-call path reads the
// numpy array struct or, through the torch adapter, the at::Tensor fields
// directly: no Python attribute lookups, no copies, no heap allocation.
#include "arguments.h"

#include <lanejit/element_types.h>
#include <lanejit/shape_binding.h>

#include <pybind11/numpy.h>

#include <algorithm>
#include <optional>
#include <string>

namespace lanejit::python {
namespace {
const TorchTable *torch_table = nullptr; // set once; the GIL guards it
constexpr int kNpyHalf = 23;             // numpy's float16 (pybind11 has no name for it)
constexpr int kNpyUserDef = 256;         // type numbers from here on are registered at run time

// An array argument in elements, whichever library it came from.
struct ArrayView {
  void *data = nullptr;
  int dims = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
  bool writable = true;
  ArrayLibrary library = ArrayLibrary::None;
};

// Names an argument in messages: "input 'x'" or "output 'y'".
std::string what(const char *role, const std::string &name) {
  return std::string("lanejit: ") + role + " '" + name + "'";
}

[[noreturn]] void typeError(const std::string &message) {
  throw py::type_error(message);
}
[[noreturn]] void valueError(const std::string &message) {
  throw py::value_error(message);
}

// The element type's name in numpy and torch ("must be bfloat16").
std::string elementName(DType type) {
  return type == DType::BF16  ? "bfloat16"
         : type == DType::F16 ? "float16"
         : type == DType::I8  ? "int8"
                              : "float32";
}

// numpy has no bfloat16; ml_dtypes adds one (a dtype registered when it is
// imported). Held for the life of the process, created on first need.
PyObject *bf16_dtype = nullptr;

bool mlDtypesLoaded() {
  PyObject *module = PyDict_GetItemString(PyImport_GetModuleDict(), "ml_dtypes");
  return module && module != Py_None;
}

// np.dtype(ml_dtypes.bfloat16), importing ml_dtypes; ImportError naming
// `what` when it is not installed.
py::dtype bf16Dtype(const std::string &what) {
  if (!bf16_dtype) {
    py::object type;
    try {
      type = py::module_::import("ml_dtypes").attr("bfloat16");
    } catch (py::error_already_set &e) {
      if (!e.matches(PyExc_ImportError))
        throw;
      throw py::import_error(what + " is bf16: a numpy bfloat16 array needs the ml_dtypes " +
                             "package, which is not installed (pip install ml_dtypes); " +
                             "torch.bfloat16 tensors need nothing more");
    }
    bf16_dtype = py::dtype::from_args(type).release().ptr();
  }
  return py::reinterpret_borrow<py::dtype>(bf16_dtype);
}

// ml_dtypes.bfloat16's numpy type number, or -1 while ml_dtypes is not
// imported (no array can be of that type before it is).
int bf16TypeNum() {
  if (!bf16_dtype && !mlDtypesLoaded())
    return -1;
  return bf16Dtype("a buffer").num();
}

// The buffer type of a numpy array's elements, or nullopt for any other.
std::optional<DType> numpyType(const py::detail::PyArrayDescr_Proxy *descr) {
  if (descr->byteorder == '>') // not the machine's order
    return std::nullopt;
  if (descr->type_num == py::detail::npy_api::NPY_FLOAT_)
    return DType::F32;
  if (descr->type_num == kNpyHalf)
    return DType::F16;
  if (descr->type_num == py::detail::npy_api::NPY_BYTE_) // int8
    return DType::I8;
  if (descr->type_num >= kNpyUserDef && descr->type_num == bf16TypeNum())
    return DType::BF16;
  return std::nullopt;
}

std::optional<DType> tensorType(TensorElement element) {
  switch (element) {
  case TensorElement::F32: return DType::F32;
  case TensorElement::BF16: return DType::BF16;
  case TensorElement::F16: return DType::F16;
  case TensorElement::I8: return DType::I8;
  case TensorElement::Other: break;
  }
  return std::nullopt;
}

// The clause a type mismatch ends with for a bf16 buffer while ml_dtypes
// is missing: numpy bf16 arrays cannot exist then.
std::string bf16Hint(DType want) {
  if (want != DType::BF16 || mlDtypesLoaded())
    return "";
  try {
    py::module_::import("ml_dtypes");
    return "";
  } catch (py::error_already_set &) {
    return " (numpy bfloat16 arrays need the ml_dtypes package, which is not installed; "
           "or pass a torch.bfloat16 tensor)";
  }
}

std::string typeName(py::handle object) {
  return Py_TYPE(object.ptr())->tp_name;
}

bool numpyView(py::handle object, const char *role, const std::string &name, DType want,
               ArrayView &view) {
  auto &api = py::detail::npy_api::get();
  if (!api.PyArray_Check_(object.ptr()))
    return false;
  auto *array = py::detail::array_proxy(object.ptr());
  auto *descr = py::detail::array_descriptor_proxy(array->descr);
  if (numpyType(descr) != want)
    typeError(what(role, name) + " must be " + elementName(want) + ", got a numpy array of " +
              std::string(py::str(array->descr)) + bf16Hint(want));
  int64_t bytes = bytesOf(want);
  if (array->nd > kMaxDims)
    valueError(what(role, name) + " has " + std::to_string(array->nd) + " dimensions");
  if (!(array->flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    valueError(what(role, name) + " is not aligned to " + std::to_string(bytes) + " bytes");
  view.library = ArrayLibrary::Numpy;
  view.data = array->data;
  view.dims = array->nd;
  view.writable = array->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  for (int i = 0; i < array->nd; ++i) {
    view.sizes[i] = array->dimensions[i];
    if (array->strides[i] % bytes != 0)
      valueError(what(role, name) + " has a stride of " + std::to_string(array->strides[i]) +
                 " bytes, not a whole number of " + elementName(want) + " elements");
    view.strides[i] = array->strides[i] / bytes;
  }
  return true;
}

bool torchView(py::handle object, const char *role, const std::string &name, DType want,
               ArrayView &view) {
  const TorchTable *table = torchTable();
  TensorView t;
  if (!table || !table->view(object.ptr(), &t))
    return false;
  if (tensorType(t.element) != want)
    typeError(what(role, name) + " must be " + elementName(want) + ", got a torch tensor of " +
              t.dtype);
  if (!t.on_cpu)
    typeError(what(role, name) + " is a " + t.device +
              " tensor; lanejit kernels run on the CPU (move it with .cpu())");
  if (!t.strided)
    typeError(what(role, name) + " is not a dense (strided) tensor");
  if (t.needs_grad)
    typeError(what(role, name) +
              " requires grad; call the kernel under torch.no_grad() or pass .detach()");
  if (t.dims > kMaxDims)
    valueError(what(role, name) + " has " + std::to_string(t.dims) + " dimensions");
  view.library = ArrayLibrary::Torch;
  view.data = t.data;
  view.dims = t.dims;
  for (int i = 0; i < t.dims; ++i) {
    view.sizes[i] = t.sizes[i];
    view.strides[i] = t.strides[i];
  }
  return true;
}

// The first row tensor's leading dimensions, which allocated outputs repeat.
void recordLeading(const ArrayView &view, BoundArguments &bound) {
  if (bound.leading_dims != 0)
    return;
  bound.leading_dims = view.dims - 1;
  for (int i = 0; i < view.dims - 1; ++i)
    bound.leading[i] = view.sizes[i];
}

// [.., R, cols] -> BufferRef::matrix(rows = product of the leading sizes).
// The leading dimensions must step by whole rows (any contiguous tensor,
// or a row-strided view of one); anything else would need a copy.
BufferRef rowTensor(const ArrayView &view, const char *role, const std::string &name,
                    BoundArguments &bound) {
  if (view.dims < 2)
    valueError(what(role, name) + " is a row tensor [R, cols] and must have at least 2 " +
               "dimensions, got " + std::to_string(view.dims));
  int last = view.dims - 1;
  int64_t cols = view.sizes[last];
  int64_t count = 1; // rows, when no dimension is empty
  for (int i = 0; i < last; ++i)
    count *= view.sizes[i];
  if (count == 0 || cols == 0) { // no element is addressed: strides mean nothing
    recordLeading(view, bound);
    return BufferRef::matrix(view.data, count, cols, cols);
  }
  if (cols > 1 && view.strides[last] != 1)
    valueError(what(role, name) + " must have unit column stride, got a stride of " +
               std::to_string(view.strides[last]) + " elements");
  int64_t rows = 1, row_stride = -1;
  for (int i = last - 1; i >= 0; --i) {
    if (view.sizes[i] != 1) {
      if (row_stride < 0) // the innermost leading dimension that steps
        row_stride = view.strides[i];
      else if (view.strides[i] != row_stride * rows)
        valueError(what(role, name) + " has leading dimensions that do not step by whole rows " +
                   "(stride " + std::to_string(view.strides[i]) + " at dimension " +
                   std::to_string(i) + "); only contiguous or row-strided views are passed " +
                   "without a copy");
    }
    rows *= view.sizes[i];
  }
  if (row_stride < 0 || rows <= 1)
    row_stride = cols;
  if (row_stride <= 0)
    valueError(what(role, name) + " has a row stride of " + std::to_string(row_stride) +
               " elements; rows must not overlap or run backwards");
  recordLeading(view, bound);
  return BufferRef::matrix(view.data, rows, cols, row_stride);
}

BufferRef bindOne(py::handle object, ParamKind kind, DType type, const char *role,
                  const std::string &name, bool writable, BoundArguments &bound, float &scalar) {
  ArrayView view;
  if (!numpyView(object, role, name, type, view) &&
      !torchView(object, role, name, type, view)) {
    // Python numbers and numpy scalars (np.float32(...)) for scalar inputs,
    // rounded to the declared type as a kernel's store would round them.
    if (kind == ParamKind::Scalar && PyNumber_Check(object.ptr()) &&
        Py_TYPE(object.ptr())->tp_as_number->nb_float) {
      double value = PyFloat_AsDouble(object.ptr());
      if (PyErr_Occurred())
        throw py::error_already_set();
      writeElement(&scalar, type, 0, static_cast<float>(value));
      return BufferRef::scalar(&scalar);
    }
    typeError(what(role, name) + " must be a numpy array or a torch tensor of " +
              elementName(type) + (kind == ParamKind::Scalar ? " (0-d) or a Python number" : "") +
              ", got " + typeName(object));
  }
  if (writable && !view.writable)
    valueError(what(role, name) + " is a read-only array");
  if (bound.library == ArrayLibrary::None)
    bound.library = view.library;
  switch (kind) {
  case ParamKind::RowTensor: return rowTensor(view, role, name, bound);
  case ParamKind::ColVector:
    if (view.dims != 1)
      valueError(what(role, name) +
                 " is a column vector [cols] and must have 1 dimension, "
                 "got " +
                 std::to_string(view.dims));
    if (view.sizes[0] > 1 && view.strides[0] != 1)
      valueError(what(role, name) + " must have unit stride, got a stride of " +
                 std::to_string(view.strides[0]) + " elements");
    return BufferRef::vector(view.data, view.sizes[0]);
  case ParamKind::Scalar:
    if (view.dims != 0)
      valueError(what(role, name) + " is a scalar and must have 0 dimensions, got " +
                 std::to_string(view.dims));
    return BufferRef::scalar(view.data);
  }
  return {};
}

TensorElement tensorElementOf(DType type) {
  return type == DType::BF16  ? TensorElement::BF16
         : type == DType::F16 ? TensorElement::F16
         : type == DType::I8  ? TensorElement::I8
                              : TensorElement::F32;
}

std::string names(const Program &program) {
  std::string list;
  for (const Param &p : program.inputs)
    list += (list.empty() ? "" : ", ") + p.name;
  return list;
}

} // namespace

// The adapter (arguments.h), imported the first time it can matter: torch is loaded (an
// object cannot be a tensor otherwise) and the adapter was built.
const TorchTable *torchTable() {
  if (torch_table)
    return torch_table;
  if (!PyDict_GetItemString(PyImport_GetModuleDict(), "torch"))
    return nullptr;
  static bool missing = false; // built without the adapter: tensors are refused
  if (missing)
    return nullptr;
  py::object capsule;
  try {
    capsule = py::module_::import("lanejit._lanejit_torch").attr("table");
  } catch (py::error_already_set &e) {
    if (!e.matches(PyExc_ImportError))
      throw;
    missing = true;
    return nullptr;
  }
  torch_table =
      static_cast<const TorchTable *>(PyCapsule_GetPointer(capsule.ptr(), kTorchTableCapsule));
  if (!torch_table)
    throw py::error_already_set();
  return torch_table;
}

void bindInputs(const Program &program, py::handle args, size_t first, BoundArguments &bound) {
  size_t given = PyTuple_GET_SIZE(args.ptr()) - first;
  if (given != program.inputs.size())
    typeError("lanejit: " + program.name + " takes " + std::to_string(program.inputs.size()) +
              " inputs (" + names(program) + "), got " + std::to_string(given));
  if (program.inputs.size() > BoundArguments::kMaxBuffers)
    valueError("lanejit: " + program.name + " has more than " +
               std::to_string(BoundArguments::kMaxBuffers) + " inputs");
  for (size_t i = 0; i < given; ++i) {
    const Param &decl = program.inputs[i];
    bound.inputs[i] = bindOne(PyTuple_GET_ITEM(args.ptr(), first + i), decl.kind, decl.type,
                              "input", decl.name, false, bound, bound.scalars[i]);
  }
  bound.input_count = static_cast<int>(given);
}

void bindOutputs(const Program &program, py::handle out, BoundArguments &bound) {
  size_t count = program.outputs.size();
  if (count > BoundArguments::kMaxBuffers)
    valueError("lanejit: " + program.name + " has too many outputs");
  bool sequence = PyTuple_Check(out.ptr()) || PyList_Check(out.ptr());
  if (count == 1 && !sequence) {
    float unused;
    const Output &decl = program.outputs[0];
    bound.outputs[0] =
        bindOne(out, ParamKind::RowTensor, decl.type, "output", decl.name, true, bound, unused);
  } else {
    if (!sequence || static_cast<size_t>(py::len(out)) != count)
      typeError("lanejit: " + program.name + " has " + std::to_string(count) +
                " outputs; out= must be a tuple of " + std::to_string(count) + " arrays");
    py::sequence items = py::reinterpret_borrow<py::sequence>(out);
    for (size_t i = 0; i < count; ++i) {
      float unused;
      const Output &decl = program.outputs[i];
      bound.outputs[i] = bindOne(items[i], ParamKind::RowTensor, decl.type, "output", decl.name,
                                 true, bound, unused);
    }
  }
  bound.output_count = static_cast<int>(count);
}

py::object allocateOutputs(const Program &program, Shape shape, BoundArguments &bound) {
  size_t count = program.outputs.size();
  if (count > BoundArguments::kMaxBuffers)
    valueError("lanejit: " + program.name + " has too many outputs");
  // [leading..., cols], or [rows, cols] when no input had leading dimensions.
  int64_t sizes[kMaxDims + 1];
  int dims = bound.leading_dims;
  if (dims == 0)
    sizes[dims++] = shape.rows;
  else
    std::copy(bound.leading.begin(), bound.leading.begin() + dims, sizes);
  py::object single;
  py::tuple several(count > 1 ? count : 0);
  for (size_t i = 0; i < count; ++i) {
    int64_t cols = evaluateDim(program.outputs[i].cols, shape.cols, "an output's columns");
    sizes[dims] = cols;
    py::object array;
    void *data = nullptr;
    DType type = program.outputs[i].type;
    if (bound.library == ArrayLibrary::Torch) {
      PyObject *tensor = torchTable()->empty(sizes, dims + 1, tensorElementOf(type), &data);
      if (!tensor)
        throw py::error_already_set();
      array = py::reinterpret_steal<py::object>(tensor);
    } else {
      std::vector<py::ssize_t> shape(sizes, sizes + dims + 1);
      py::dtype dtype = type == DType::F32   ? py::dtype::of<float>()
                        : type == DType::F16 ? py::dtype(kNpyHalf)
                        : type == DType::I8  ? py::dtype::of<int8_t>()
                                             : bf16Dtype(what("output", program.outputs[i].name));
      py::array a(dtype, shape);
      data = a.mutable_data();
      array = std::move(a);
    }
    // Dense, as allocated: no view to read back.
    bound.outputs[i] = BufferRef::matrix(data, shape.rows, cols);
    if (count == 1)
      single = std::move(array);
    else
      several[i] = std::move(array);
  }
  bound.output_count = static_cast<int>(count);
  return count == 1 ? single : several;
}

} // namespace lanejit::python
