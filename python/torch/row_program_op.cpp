// `torch.ops.lanejit.row_program(program, signature, inputs) -> Tensor[]`:
// the operator a captured subgraph becomes in a Dynamo graph
// (python/lanejit/torch/row_op.py says what its arguments mean). Defined and
// run here, in C++, so a call costs what the kernel costs plus a few
// tensor allocations: no Python code runs between Inductor's wrapper and
// the native entry.
//
// A call finds its entry by the program and signature text.
// lanejit.torch.row_op registers one when it compiles the kernel
// (register_row_program); a call whose entry is missing (code Inductor
// cached in another process) asks lanejit.torch.row_op to compile it,
// under the GIL, once.
#include "../src/torch_table.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
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

// Each buffer's element type as the program declares it: float32 (also
// for bools, as 0/1), bfloat16 or float16.
struct InputRule {
  Kind kind = Kind::Rows;
  bool is_bool = false;
  at::ScalarType storage = at::kFloat;
  ShapeRule broadcast; // Kind::Broadcast
};

struct OutputRule {
  ShapeRule shape;
  bool is_bool = false;
  at::ScalarType storage = at::kFloat;
};

struct Entry {
  const void *kernel = nullptr; // a lanejit::Kernel that lanejit.torch.row_op keeps alive
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
      py::module_::import("lanejit.torch.row_op")
          .attr("kernel_for")(std::string(program), std::string(signature));
    } catch (py::error_already_set &e) {
      TORCH_CHECK(false, "lanejit::row_program: cannot compile its kernel: ", e.what());
    }
  }
  const Entry *e = find(key);
  TORCH_CHECK(e, "lanejit::row_program: the kernel was compiled but not registered");
  return *e;
}

// A CPU tensor the binder reads as rows: 2-D with unit column
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

// Inputs broadcast over outer dims (RoPE's cos and sin [T, D] against
// q [B, H, T, D]) are not copied to rows: the kernel runs once per outer
// index, over the inner dims' rows, each input at its own offset. This is
// that plan, or none (outer count 1, or layouts it does not cover: then
// broadcast inputs are copied to rows).
struct OuterLoop {
  std::vector<int64_t> outer;  // the outer dims' sizes
  int64_t count = 1;           // their product
  int64_t inner_rows = 1;      // rows per launch
  // Per broadcast input: its element stride per outer dim (0: broadcast).
  std::vector<std::vector<int64_t>> strides;
};

constexpr int64_t kMaxLaunches = 4096;

std::optional<OuterLoop> outerLoop(const std::vector<int64_t> &target,
                                   const std::vector<at::Tensor> &broadcast,
                                   const std::vector<at::Tensor> &rows,
                                   const std::vector<at::Tensor> &outputs) {
  if (broadcast.empty() || target.size() < 2)
    return std::nullopt;
  std::vector<int64_t> lead(target.begin(), target.end() - 1);
  for (const at::Tensor &t : rows)
    if (!t.is_contiguous() || std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 1) != lead)
      return std::nullopt;
  for (const at::Tensor &t : outputs)
    if (std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 1) != lead)
      return std::nullopt;
  size_t dims = lead.size();
  // Padded on the left to the target's rank: sizes and element strides.
  auto padded = [&](const at::Tensor &x, size_t i, bool stride) -> int64_t {
    size_t pad = dims + 1 - x.dim();
    if (i < pad)
      return stride ? 0 : 1;
    return stride ? x.stride(i - pad) : x.size(i - pad);
  };
  // The leading dims from `inner` on are every broadcast input's own (not
  // broadcast): a launch covers them; the ones before are looped over.
  size_t inner = 0;
  for (const at::Tensor &x : broadcast) {
    if (x.dim() > static_cast<int64_t>(dims) + 1 || !x.is_contiguous())
      return std::nullopt;
    size_t i = dims;
    while (i > 0 && padded(x, i - 1, false) == lead[i - 1])
      --i;
    inner = std::max(inner, i);
  }
  OuterLoop plan;
  plan.outer.assign(lead.begin(), lead.begin() + inner);
  for (int64_t d : plan.outer)
    plan.count *= d;
  for (size_t i = inner; i < dims; ++i)
    plan.inner_rows *= lead[i];
  if (plan.count <= 1 || plan.count > kMaxLaunches || plan.inner_rows == 0)
    return std::nullopt;
  for (const at::Tensor &x : broadcast) {
    std::vector<int64_t> st;
    for (size_t i = 0; i < inner; ++i)
      st.push_back(padded(x, i, false) == 1 ? 0 : padded(x, i, true));
    plan.strides.push_back(std::move(st));
  }
  return plan;
}

// Element `index` of a buffer of `size`-byte elements.
void *elementAt(void *data, int64_t index, int64_t size) {
  return static_cast<char *>(data) + index * size;
}

int runKernel(const Entry &e, const std::vector<BufferRef> &in, const std::vector<BufferRef> &out,
              char (&error)[512]) {
  return runner->run(e.kernel, in.data(), static_cast<int>(in.size()), out.data(),
                     static_cast<int>(out.size()), error, sizeof error);
}

std::vector<at::Tensor> rowProgram(c10::string_view program, c10::string_view signature,
                                   at::TensorList inputs) {
  const Entry &e = entryFor(program, signature);
  TORCH_CHECK(inputs.size() == e.inputs.size(), "lanejit::row_program: ", inputs.size(),
              " inputs where the program has ", e.inputs.size());
  std::vector<at::Tensor> held(inputs.size()); // prepared inputs, alive through the call
  std::vector<BufferRef> in(inputs.size()), out;
  std::vector<size_t> broadcast_at, rows_at;
  std::vector<int64_t> target;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputRule &rule = e.inputs[i];
    at::Tensor x = inputs[i];
    if (x.scalar_type() != rule.storage) // bools; a float input is of its type already
      x = x.to(rule.storage);
    switch (rule.kind) {
    case Kind::Scalar:
      if (x.dim() != 0)
        x = x.reshape({});
      in[i] = BufferRef::scalar(x.data_ptr());
      break;
    case Kind::Columns:
      if (x.dim() != 1 || x.stride(0) != 1)
        x = x.reshape({-1}).contiguous();
      in[i] = BufferRef::vector(x.data_ptr(), x.numel());
      break;
    case Kind::Broadcast: {
      std::vector<int64_t> t = rule.broadcast.of(inputs);
      TORCH_CHECK(target.empty() || t == target,
                  "lanejit::row_program: broadcast inputs of different shapes");
      target = std::move(t);
      x = x.contiguous();
      broadcast_at.push_back(i);
      break;
    }
    case Kind::Rows:
      x = asRows(x);
      in[i] = rowsRef(x);
      rows_at.push_back(i);
      break;
    }
    held[i] = std::move(x);
  }
  std::vector<at::Tensor> results;
  results.reserve(e.outputs.size());
  for (const OutputRule &o : e.outputs) {
    at::Tensor y = at::empty(o.shape.of(inputs), at::TensorOptions().dtype(o.storage));
    out.push_back(rowsRef(y.dim() < 2 ? y.view({1, -1}) : y));
    results.push_back(std::move(y));
  }
  std::vector<at::Tensor> bx, rx;
  for (size_t i : broadcast_at)
    bx.push_back(held[i]);
  for (size_t i : rows_at)
    rx.push_back(held[i]);
  std::optional<OuterLoop> loop = outerLoop(target, bx, rx, results);
  if (!loop)
    for (size_t i : broadcast_at) { // copied to rows
      held[i] = held[i].expand(target).contiguous();
      in[i] = rowsRef(held[i]);
    }
  char error[512];
  int failed = 0;
  {
    std::optional<py::gil_scoped_release> release;
    if (PyGILState_Check()) // called from Python (Inductor's wrapper): let others run
      release.emplace();
    if (!loop) {
      failed = runKernel(e, in, out, error);
    } else {
      std::vector<BufferRef> in_at = in, out_at = out;
      std::vector<int64_t> index(loop->outer.size(), 0);
      for (int64_t o = 0; o < loop->count && !failed; ++o) {
        // Offsets in elements of each buffer's own type.
        int64_t first = o * loop->inner_rows;
        for (size_t i : rows_at)
          in_at[i] = BufferRef::matrix(
              elementAt(in[i].data, first * in[i].cols, held[i].element_size()),
              loop->inner_rows, in[i].cols);
        for (size_t k = 0; k < out.size(); ++k)
          out_at[k] = BufferRef::matrix(
              elementAt(out[k].data, first * out[k].cols, results[k].element_size()),
              loop->inner_rows, out[k].cols);
        for (size_t b = 0; b < broadcast_at.size(); ++b) {
          const at::Tensor &x = held[broadcast_at[b]];
          int64_t offset = 0;
          for (size_t d = 0; d < index.size(); ++d)
            offset += index[d] * loop->strides[b][d];
          in_at[broadcast_at[b]] =
              BufferRef::matrix(elementAt(x.data_ptr(), offset, x.element_size()),
                                loop->inner_rows, x.size(-1));
        }
        failed = runKernel(e, in_at, out_at, error);
        for (size_t d = index.size(); d-- > 0;) { // the next outer index
          if (++index[d] < loop->outer[d])
            break;
          index[d] = 0;
        }
      }
    }
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

// A signature's element type at t[i]: "f32", "bf16" or "f16"; f32 when
// absent (a signature written before bf16 and f16 buffers).
at::ScalarType storageOf(const py::sequence &t, size_t i) {
  if (t.size() <= i)
    return at::kFloat;
  std::string name = t[i].cast<std::string>();
  if (name == "f32")
    return at::kFloat;
  if (name == "bf16")
    return at::kBFloat16;
  if (name == "f16")
    return at::kHalf;
  throw std::invalid_argument("lanejit::row_program: element type " + name);
}

// row_op.kernel_for's registration: the kernel object (kept alive by
// lanejit.torch.row_op) and the parsed signature's inputs and outputs.
void registerRowProgram(const std::string &program, const std::string &signature,
                        py::object kernel, py::list inputs, py::list outputs) {
  Entry e;
  e.kernel = reinterpret_cast<const void *>(kernel.attr("_address").cast<uintptr_t>());
  for (py::handle spec : inputs) {
    // [kind, broadcast shape rule or None, is_bool, storage]
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
    r.storage = storageOf(t, 3);
    e.inputs.push_back(r);
  }
  for (py::handle spec : outputs) {
    // [reference input or -1, static shape or None, n, is_bool, storage]
    auto t = spec.cast<py::sequence>();
    OutputRule o;
    o.shape = shapeRule(t);
    o.is_bool = t[3].cast<bool>();
    o.storage = storageOf(t, 4);
    e.outputs.push_back(o);
  }
  // A reference names one of the operator's inputs (its shape is read).
  auto check = [&](const ShapeRule &r) {
    if (r.ref >= static_cast<int>(e.inputs.size()))
      throw std::invalid_argument("lanejit::row_program: a shape refers to input " +
                                  std::to_string(r.ref) + " of " +
                                  std::to_string(e.inputs.size()));
  };
  for (const InputRule &r : e.inputs)
    if (r.kind == Kind::Broadcast)
      check(r.broadcast);
  for (const OutputRule &o : e.outputs)
    check(o.shape);
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
