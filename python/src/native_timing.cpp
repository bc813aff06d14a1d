// For python/bench/overhead.py only: the same call timed below Python, so
// the script can pair a Python call with the C++ entry points in one run.
// Arguments are bound once from Python objects exactly as a call binds them.
#include "arguments.h"
#include "bindings.h"

#include <lanejit/kernel.h>
#include <lanejit/shape_binding.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

namespace lanejit::python {
namespace {

BoundArguments bindAll(const Kernel &k, py::args inputs, py::handle out) {
  BoundArguments bound;
  bindInputs(k.program(), inputs, 0, bound);
  bindOutputs(k.program(), out, bound);
  return bound;
}

// Seconds per call of the native entry over `iterations` calls: buffers
// bound and checked once, as a benchmark that binds once would call it.
// Inputs and outputs must not overlap (the entry does not stage them).
double timeNative(const Kernel &k, int64_t iterations, py::handle out, py::args inputs) {
  BoundArguments b = bindAll(k, inputs, out);
  std::span<const BufferRef> in(b.inputs.data(), b.input_count);
  std::span<const BufferRef> outs(b.outputs.data(), b.output_count);
  Shape shape = bindShape(k.program(), in, outs);
  std::vector<void *> pointers;
  std::vector<int64_t> strides;
  for (const auto &r : in) {
    pointers.push_back(r.data);
    strides.push_back(r.stride());
  }
  for (const auto &r : outs) {
    pointers.push_back(r.data);
    strides.push_back(r.stride());
  }
  size_t floats = static_cast<size_t>(k.workspaceFloats(shape.cols));
  std::unique_ptr<float, decltype(&std::free)> workspace(
      floats ? static_cast<float *>(std::aligned_alloc(64, (floats * 4 + 63) / 64 * 64)) : nullptr,
      &std::free);
  LaunchArgs args{pointers.data(), strides.data(), shape.rows, shape.cols, workspace.get()};
  NativeEntry entry = k.nativeEntry();
  py::gil_scoped_release release;
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i)
    entry(&args, 0, shape.rows);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(iterations);
}

// Seconds per call of Kernel::run (the checked C++ call) on the same buffers.
double timeRun(const Kernel &k, int64_t iterations, py::handle out, py::args inputs) {
  BoundArguments b = bindAll(k, inputs, out);
  std::span<const BufferRef> in(b.inputs.data(), b.input_count);
  std::span<const BufferRef> outs(b.outputs.data(), b.output_count);
  py::gil_scoped_release release;
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i)
    k.run(in, outs);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(iterations);
}

} // namespace

void defineTiming(py::module_ &m) {
  m.def("_time_native", &timeNative, py::arg("kernel"), py::arg("iterations"), py::arg("out"));
  m.def("_time_run", &timeRun, py::arg("kernel"), py::arg("iterations"), py::arg("out"));
}

} // namespace lanejit::python
