// _lanejit: the compiled half of the `lanejit` Python package
// (python/lanejit/__init__.py re-exports it; docs/python.md).
#include "bindings.h"

#include <lanejit/error.h>

PYBIND11_MODULE(_lanejit, m) {
  m.doc() = "lanejit: a JIT compiler for per-row LLM operators";
  // Every lanejit::Error is bad input (text, program, buffers) or a failed
  // compile; it becomes lanejit.Error, a ValueError, with the C++ message.
  static pybind11::exception<lanejit::Error> error(m, "Error", PyExc_ValueError);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const lanejit::Error &e) {
      pybind11::set_error(error, e.what());
    }
  });
  lanejit::python::defineProgram(m);
  lanejit::python::defineKernel(m);
  lanejit::python::defineTiming(m);
  lanejit::python::defineFastCalls(m);
}
