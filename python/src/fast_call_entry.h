// An entry of _lanejit.FastCalls (fast_calls.cpp): what a cached call of
// lanejit.torch's compiled callable checks and runs.
#pragma once

#include "arguments.h"

#include <lanejit/kernel.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

namespace lanejit::python {

constexpr int kMaxArgs = BoundArguments::kMaxBuffers;
constexpr size_t kMaxEntries = 32;
// Calls with fewer elements keep the GIL: the kernel takes about as long as
// releasing and taking it back.
constexpr int64_t kReleaseGilElements = int64_t{1} << 14;

// What an argument (or a module parameter) must look like for an entry.
struct Layout {
  int dims = 0;
  TensorElement element = TensorElement::F32;
  std::array<int64_t, kMaxDims> sizes{};
  std::array<int64_t, kMaxDims> strides{};

  bool matches(const TensorView &v) const {
    return v.dims == dims && v.element == element &&
           std::equal(sizes.begin(), sizes.begin() + dims, v.sizes) &&
           std::equal(strides.begin(), strides.begin() + dims, v.strides);
  }
};

// A tensor the kernel can read as it is (of a buffer type: float32,
// bfloat16, float16 or int8): the guard every entry starts with.
inline bool plainTensor(const TorchTable *table, PyObject *object, TensorView &view) {
  return table->view(object, &view) && view.element != TensorElement::Other && view.on_cpu &&
         view.strided && !view.needs_grad && view.dims <= kMaxDims;
}

inline Layout layoutOf(const TensorView &v) {
  Layout l;
  l.dims = v.dims;
  l.element = v.element;
  std::copy(v.sizes, v.sizes + v.dims, l.sizes.begin());
  std::copy(v.strides, v.strides + v.dims, l.strides.begin());
  return l;
}

struct Input {
  int arg = -1;              // the call's argument, or
  PyObject *param = nullptr; // a tensor held by the entry (guarded per call)
  Layout layout;             // param's layout at registration
};

// Held by shared_ptr: a hit keeps its entry alive while Python code (a
// forward, a finalizer run by an allocation) may clear or grow the list.
struct Entry {
  Entry() = default;
  Entry(const Entry &) = delete;
  ~Entry() { // the GIL is held wherever the last reference goes
    Py_XDECREF(last);
    Py_XDECREF(forward);
    for (Input &i : inputs)
      Py_XDECREF(i.param);
  }
  std::vector<Layout> args;
  PyObject *last = nullptr;    // what the instance's `last` becomes on a hit
  PyObject *forward = nullptr; // a Python target, or the kernel below
  std::optional<Kernel> kernel;
  std::vector<Input> inputs;
  std::vector<Layout> outputs;  // dense shapes of the kernel's outputs
  std::vector<int64_t> strides; // row strides: inputs, then outputs
  std::vector<int> pick;        // which outputs the call returns
  bool tuple = false;           // as a tuple, else pick[0] alone
  int64_t rows = 0, cols = 0;
  int threads = 1;
  NativeEntry native = nullptr; // checked to run here at registration
  int64_t workspace_floats = 0;
  int64_t block_rows = 1;
};

// The entry for a call with `args` that ran the full way (fast_call_entry.cpp):
// `forward` (a Python callable), or `kernel` with, per kernel input, the
// argument's index or a parameter tensor in `sources`, and `pick` (an
// output index, or a tuple of them, for the result). Null when an argument
// is not a plain tensor; throws what a kernel call with them would.
std::shared_ptr<Entry> makeEntry(py::tuple args, py::object last, py::object forward,
                                 py::object kernel, py::list sources, py::object pick);

} // namespace lanejit::python
