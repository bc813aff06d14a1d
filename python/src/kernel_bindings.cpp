// Compiling and calling kernels from Python (include/lanejit/kernel.h),
// and the FP64 reference evaluator. The call path is C++ end to end: bind
// the arguments (arguments.cpp), release the GIL, Kernel::run.
#include "arguments.h"
#include "bindings.h"

#include <lanejit/aot.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/reference.h>
#include <lanejit/shape_binding.h>
#include <lanejit/text.h>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <span>

namespace lanejit::python {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// compile()'s keywords: lanes, opt_level, block_rows, threads, target_triple,
// target_cpu, target_features, disabled_passes, and every boolean switch by
// its docs/switches.md name in either case (fuse_outputs=False,
// FUSE_OUTPUTS=False) or by its CompileOptions field name
// (specialize_full_packets).
CompileOptions optionsFrom(const py::kwargs &kwargs) {
  CompileOptions o = CompileOptions::fromEnvironment();
  for (auto [key, value] : kwargs) {
    std::string k = key.cast<std::string>();
    if (k == "lanes")
      o.lanes = value.cast<int>();
    else if (k == "opt_level")
      o.opt_level = value.cast<int>();
    else if (k == "block_rows")
      o.block_rows = value.cast<int>();
    else if (k == "threads")
      o.threads = value.cast<int>(); // compile() refuses < 1
    else if (k == "target_triple")
      o.target_triple = value.cast<std::string>();
    else if (k == "target_cpu")
      o.target_cpu = value.cast<std::string>();
    else if (k == "target_features")
      o.target_features = value.cast<std::string>();
    else if (k == "disabled_passes")
      o.disabled_passes = value.cast<std::vector<std::string>>();
    else {
      std::string name = upper(k);
      auto names = CompileOptions::switchNames();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string known = "lanes, opt_level, block_rows, threads, target_triple, target_cpu, "
                            "target_features, disabled_passes";
        for (const std::string &n : names)
          known += ", " + n;
        throw py::type_error("lanejit: compile() got an unknown option '" + k +
                             "' (known: " + known + "; switch names in either case)");
      }
      o.setSwitch(name, value.cast<bool>());
    }
  }
  return o;
}

py::object call(const Kernel &kernel, py::args args, py::kwargs kwargs) {
  const Program &program = kernel.program();
  BoundArguments bound;
  bindInputs(program, args, 0, bound);
  py::object result;
  int threads = 0; // 0: the kernel's own count
  if (kwargs && PyDict_GET_SIZE(kwargs.ptr()) > 0) {
    PyObject *out = PyDict_GetItemString(kwargs.ptr(), "out");
    PyObject *t = PyDict_GetItemString(kwargs.ptr(), "threads");
    if (PyDict_GET_SIZE(kwargs.ptr()) != (out != nullptr) + (t != nullptr))
      throw py::type_error("lanejit: a kernel call takes only out= and threads= as keywords");
    if (out)
      result = py::reinterpret_borrow<py::object>(out);
    if (t) {
      threads = py::reinterpret_borrow<py::object>(t).cast<int>();
      if (threads < 1)
        throw py::value_error("lanejit: threads=" + std::to_string(threads) +
                              ": a thread count must be at least 1");
    }
  }
  if (result && !result.is_none()) {
    bindOutputs(program, result, bound);
  } else {
    Shape shape = bindShape(program, std::span(bound.inputs.data(), bound.input_count), {});
    result = allocateOutputs(program, shape, bound);
  }
  py::gil_scoped_release release;
  std::span<const BufferRef> in(bound.inputs.data(), bound.input_count);
  std::span<const BufferRef> out(bound.outputs.data(), bound.output_count);
  if (threads)
    kernel.run(in, out, threads);
  else
    kernel.run(in, out);
  return result;
}

py::object reference(const Program &program, py::args args) {
  BoundArguments bound;
  bindInputs(program, args, 0, bound);
  std::span<const BufferRef> inputs(bound.inputs.data(), bound.input_count);
  Shape shape = bindShape(program, inputs, {});
  std::vector<ReferenceOutput> outs;
  {
    py::gil_scoped_release release;
    outs = evaluateReference(program, inputs, shape);
  }
  py::tuple results(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    std::vector<py::ssize_t> sizes;
    if (bound.leading_dims == 0)
      sizes.push_back(outs[i].rows);
    for (int d = 0; d < bound.leading_dims; ++d)
      sizes.push_back(bound.leading[d]);
    sizes.push_back(outs[i].cols);
    py::array_t<double> a(sizes);
    std::copy(outs[i].values.begin(), outs[i].values.end(), a.mutable_data());
    results[i] = std::move(a);
  }
  if (outs.size() == 1)
    return results[0];
  return results;
}

// A summary of the compile report (Kernel.report has all of it).
py::dict statsOf(const Kernel &k) {
  const CompileReport &r = k.report();
  py::dict d;
  d["lanes"] = r.mapping.lanes;
  d["accumulators"] = r.mapping.accumulators;
  d["traversals"] = r.traversals.size();
  d["reductions"] = r.reductions();
  d["dense_bodies"] = r.specialized_bodies;
  d["masked_bodies"] = r.masked_bodies;
  d["compile_ms"] = r.compile_ms;
  d["cache_hit"] = r.cache_hit;
  d["cpu"] = r.cpu;
  d["features"] = r.features;
  return d;
}

int runKernel(const void *kernel, const BufferRef *inputs, int input_count,
              const BufferRef *outputs, int output_count, char *error, size_t error_size) {
  try {
    static_cast<const Kernel *>(kernel)->run(std::span(inputs, input_count),
                                             std::span(outputs, output_count));
    return 0;
  } catch (const std::exception &e) {
    std::snprintf(error, error_size, "%s", e.what());
    return 1;
  }
}

KernelRunner kernelRunner{runKernel};

} // namespace

void defineKernel(py::module_ &m) {
  m.attr("_kernel_runner") = py::capsule(&kernelRunner, kKernelRunnerCapsule);
  py::class_<Kernel>(m, "Kernel", "A compiled program; call it like a function")
      .def("__call__", &call,
           "k(*inputs, out=None, threads=None): numpy in -> numpy out, torch in -> torch out; "
           "out= writes into the caller's arrays (zero-copy); threads= caps this call's "
           "threads (default: compile's threads=, else the CPU affinity count)")
      .def_property_readonly("program", &Kernel::program)
      // For the torch adapter's operator (torch_table.h, KernelRunner): the
      // object's address, valid while this Python object lives.
      .def_property_readonly("_address",
                             [](const Kernel &k) { return reinterpret_cast<uintptr_t>(&k); })
      .def_property_readonly("options", [](const Kernel &k) { return k.options().key(); })
      .def_property_readonly("stats", &statsOf)
      .def_property_readonly("input_names",
                             [](const Kernel &k) {
                               std::vector<std::string> n;
                               for (const Param &p : k.program().inputs)
                                 n.push_back(p.name);
                               return n;
                             })
      .def_property_readonly("output_names",
                             [](const Kernel &k) {
                               std::vector<std::string> n;
                               for (const Output &o : k.program().outputs)
                                 n.push_back(o.name);
                               return n;
                             })
      .def("workspace_floats", &Kernel::workspaceFloats, py::arg("cols"))
      .def(
          "dump",
          [](const Kernel &k, const std::string &stage) -> py::object {
            if (stage == "object")
              return py::bytes(k.object());
            return py::str(k.dump(stage));
          },
          py::arg("stage"),
          "passes, ir, plan, llvm-unoptimized, llvm, asm (text) or object (bytes)")
      .def("_report_text", [](const Kernel &k) { return k.report().text(); })
      .def("_report_json", [](const Kernel &k) { return k.report().json(); })
      .def("_inspect",
           [](const Kernel &k) {
             inspect::ObjectReport r;
             {
               py::gil_scoped_release release;
               r = inspect::inspectKernel(k);
             }
             return py::make_tuple(inspect::toText(r), inspect::toJson(r));
           })
      .def("_aot", [](const Kernel &k) {
        aot::Artifacts a = aot::build(k);
        return py::make_tuple(py::bytes(a.object), a.header, a.entry_symbol, a.imports);
      });

  m.def(
      "compile",
      [](const Program &program, py::kwargs kwargs) {
        CompileOptions options = optionsFrom(kwargs);
        py::gil_scoped_release release;
        return compile(program, options);
      },
      py::arg("program"),
      "compile(program, lanes=0, **switches): switch names as in docs/switches.md");
  m.def("switch_names", &CompileOptions::switchNames);
  m.def("reference", &reference, py::arg("program"),
        "reference(program, *inputs): the FP64 oracle's outputs as float64 numpy arrays");
}

} // namespace lanejit::python
