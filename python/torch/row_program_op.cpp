// `torch.ops.lanejit.row_program(program, signature, inputs) -> Tensor[]`:
// the operator a captured subgraph becomes in a Dynamo graph
// (python/lanejit/_row_op.py says what its arguments mean). Defined and
// run here, in C++, so a call costs what the kernel costs plus a few
// tensor allocations: no Python code runs between Inductor's wrapper and
// the native entry.
//
// A call finds its entry by the program and signature text. _row_op
// registers one when it compiles the kernel (register_row_program); a
// call whose entry is missing (code Inductor cached in another process)
// asks _row_op to compile it, under the GIL, once.
#include "../src/torch_table.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace {

using lanejit::BufferRef;

// Where a shape's leading dims come from: an input's (ref >= 0, symbolic
// ones included) or a static shape; n columns last.
struct ShapeRule {
  int ref = -1;
  std::vector<int64_t> fixed;
  int64_t n = 1;

  std::vector<int64_t> of(const at::TensorList &inputs) const {
    if (ref < 0)
      return fixed;
    std::vector<int64_t> s(inputs[ref].sizes().begin(), inputs[ref].sizes().end());
    if (s.empty())
      s.push_back(n);
    else
      s.back() = n;
    return s;
  }
};

enum class Kind { Rows, Columns, Scalar, Broadcast };

struct InputRule {
  Kind kind = Kind::Rows;
  bool is_bool = false;
  ShapeRule broadcast; // Kind::Broadcast
};

struct OutputRule {
  ShapeRule shape;
  bool is_bool = false;
};

struct Entry {
  const void *kernel = nullptr; // a lanejit::Kernel that _row_op keeps alive
  std::vector<InputRule> inputs;
  std::vector<OutputRule> outputs;
};

std::shared_mutex registry_mutex;
std::unordered_map<std::string, Entry> registry;
const lanejit::python::KernelRunner *runner = nullptr;

std::string keyOf(c10::string_view program, c10::string_view signature) {
  std::string key(program.data(), program.size());
  key.push_back('\x1f');
  key.append(signature.data(), signature.size());
  return key;
}

// Entries are added once and never changed or removed, and the map's
// nodes do not move: a pointer to one stays valid without the lock.
const Entry *find(const std::string &key) {
  std::shared_lock lock(registry_mutex);
  auto it = registry.find(key);
  return it == registry.end() ? nullptr : &it->second;
}

const Entry &entryFor(c10::string_view program, c10::string_view signature) {
  std::string key = keyOf(program, signature);
  if (const Entry *e = find(key))
    return *e;
  {
    py::gil_scoped_acquire gil;
    try {
      py::module_::import("lanejit._row_op")
          .attr("kernel_for")(std::string(program), std::string(signature));
    } catch (py::error_already_set &e) {
      TORCH_CHECK(false, "lanejit::row_program: cannot compile its kernel: ", e.what());
    }
  }
  const Entry *e = find(key);
  TORCH_CHECK(e, "lanejit::row_program: the kernel was compiled but not registered");
  return *e;
}

// A float32 CPU tensor the binder reads as rows: 2-D with unit column
// stride (any row stride), or N-D contiguous; else a contiguous copy.
at::Tensor asRows(at::Tensor x) {
  if (x.dim() < 2)
    return x.reshape({1, -1});
  bool two_d = x.dim() == 2 && x.stride(1) == 1 && x.stride(0) >= x.size(1);
  return two_d || x.is_contiguous() ? x : x.contiguous();
}

BufferRef rowsRef(const at::Tensor &x) {
  int64_t cols = x.size(-1);
  int64_t rows = cols ? x.numel() / cols : 0;
  int64_t stride = x.dim() == 2 ? x.stride(0) : cols;
  return BufferRef::matrix(x.data_ptr(), rows, cols, stride);
}

std::vector<at::Tensor> rowProgram(c10::string_view program, c10::string_view signature,
                                   at::TensorList inputs) {
  const Entry &e = entryFor(program, signature);
  TORCH_CHECK(inputs.size() == e.inputs.size(), "lanejit::row_program: ", inputs.size(),
              " inputs where the program has ", e.inputs.size());
  std::vector<at::Tensor> held; // prepared inputs, alive through the call
  std::vector<BufferRef> in, out;
  held.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputRule &rule = e.inputs[i];
    at::Tensor x = inputs[i];
    if (rule.is_bool || x.scalar_type() != at::kFloat)
      x = x.to(at::kFloat);
    switch (rule.kind) {
    case Kind::Scalar:
      if (x.dim() != 0)
        x = x.reshape({});
      in.push_back(BufferRef::scalar(x.data_ptr()));
      break;
    case Kind::Columns:
      if (x.dim() != 1 || x.stride(0) != 1)
        x = x.reshape({-1}).contiguous();
      in.push_back(BufferRef::vector(x.data_ptr(), x.numel()));
      break;
    case Kind::Broadcast:
      x = x.expand(rule.broadcast.of(inputs)).contiguous();
      in.push_back(rowsRef(x));
      break;
    case Kind::Rows:
      x = asRows(x);
      in.push_back(rowsRef(x));
      break;
    }
    held.push_back(std::move(x));
  }
  std::vector<at::Tensor> results;
  results.reserve(e.outputs.size());
  for (const OutputRule &o : e.outputs) {
    at::Tensor y = at::empty(o.shape.of(inputs), at::TensorOptions().dtype(at::kFloat));
    out.push_back(rowsRef(y.dim() < 2 ? y.view({1, -1}) : y));
    results.push_back(std::move(y));
  }
  char error[512];
  int failed;
  if (PyGILState_Check()) { // called from Python (Inductor's wrapper): let others run
    py::gil_scoped_release release;
    failed = runner->run(e.kernel, in.data(), static_cast<int>(in.size()), out.data(),
                         static_cast<int>(out.size()), error, sizeof error);
  } else {
    failed = runner->run(e.kernel, in.data(), static_cast<int>(in.size()), out.data(),
                         static_cast<int>(out.size()), error, sizeof error);
  }
  TORCH_CHECK(!failed, "lanejit::row_program: ", error);
  for (size_t i = 0; i < results.size(); ++i)
    if (e.outputs[i].is_bool)
      results[i] = results[i].ne(0);
  return results;
}

ShapeRule shapeRule(py::handle spec) {
  // [reference input or -1, static shape or None, n]
  auto t = spec.cast<py::sequence>();
  ShapeRule r;
  r.ref = t[0].cast<int>();
  if (!t[1].is_none())
    r.fixed = t[1].cast<std::vector<int64_t>>();
  r.n = t[2].cast<int64_t>();
  return r;
}

// _row_op.kernel_for's registration: the kernel object (kept alive by
// _row_op) and the parsed signature's inputs and outputs.
void registerRowProgram(const std::string &program, const std::string &signature,
                        py::object kernel, py::list inputs, py::list outputs) {
  Entry e;
  e.kernel = reinterpret_cast<const void *>(kernel.attr("_address").cast<uintptr_t>());
  for (py::handle spec : inputs) {
    // [kind, broadcast shape rule or None, is_bool]
    auto t = spec.cast<py::sequence>();
    std::string kind = t[0].cast<std::string>();
    InputRule r;
    r.kind = kind == "rows"      ? Kind::Rows
             : kind == "columns" ? Kind::Columns
             : kind == "scalar"  ? Kind::Scalar
             : kind == "broadcast"
                 ? Kind::Broadcast
                 : throw std::invalid_argument("lanejit::row_program: input kind " + kind);
    if (r.kind == Kind::Broadcast)
      r.broadcast = shapeRule(t[1]);
    r.is_bool = t[2].cast<bool>();
    e.inputs.push_back(r);
  }
  for (py::handle spec : outputs) {
    // [reference input or -1, static shape or None, n, is_bool]
    auto t = spec.cast<py::sequence>();
    OutputRule o;
    o.shape = shapeRule(t);
    o.is_bool = t[3].cast<bool>();
    e.outputs.push_back(o);
  }
  std::unique_lock lock(registry_mutex);
  registry.try_emplace(keyOf(program, signature), std::move(e));
}

} // namespace

TORCH_LIBRARY(lanejit, m) {
  m.def("row_program(str program, str signature, Tensor[] inputs) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(lanejit, CPU, m) { m.impl("row_program", rowProgram); }

void defineRowProgram(py::module_ &m) {
  runner = static_cast<const lanejit::python::KernelRunner *>(
      PyCapsule_Import(lanejit::python::kKernelRunnerCapsule, 0));
  if (!runner)
    throw py::error_already_set();
  m.def("register_row_program", &registerRowProgram, py::arg("program"), py::arg("signature"),
        py::arg("kernel"), py::arg("inputs"), py::arg("outputs"));
}
