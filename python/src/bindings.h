// The pieces of the _lanejit module, one file each.
#pragma once

#include <pybind11/pybind11.h>

namespace lanejit::python {
namespace py = pybind11;

void defineProgram(py::module_ &m); // program_bindings.cpp: Dim, Expr, Program, DSL, text, library
void defineKernel(py::module_ &m);  // kernel_bindings.cpp: compile, Kernel, reference
void defineTiming(py::module_ &m);  // native_timing.cpp: the benchmark's native loop
void defineFastCalls(py::module_ &m); // fast_calls.cpp: lanejit.torch's cached call path

} // namespace lanejit::python
