// _lanejit.FastCalls: the C base class of lanejit.torch's compiled callable
// (python/lanejit/torch/compiled.py, docs/torch.md "Per-call cost").
//
// A call with no keywords looks its positional arguments up in a short list
// of entries the Python side registered: each fixes the argument count and,
// per argument, that it is a dense CPU tensor not needing grad with exactly
// this element type (float32, bfloat16, float16 or int8), sizes and strides; and
// that CPU autocast is off (entries are registered only then). A hit
// runs the entry's target without any Python code: either the kernel itself
// (arguments and module parameters bound to its inputs by pointer, outputs
// allocated as the plain kernel call allocates them, the native entry
// called with the strides and shape checked once at registration), or a
// Python callable (the specialization's forward). Anything else, and every
// miss, calls the instance's `_call` method, the full Python path; so the
// list is only a cache and every guard the Python path has still decides
// what it holds.
#include "bindings.h"
#include "fast_call_entry.h"
#include "launch/aligned_workspace.h"

#include <structmember.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace lanejit::python {
namespace {

struct FastCalls {
  PyObject_HEAD PyObject *last;
  char check; // set from Python (check=True); no entry runs while it is
  std::vector<std::shared_ptr<Entry>> *entries;
};

PyObject *slowCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  static PyObject *name = PyUnicode_InternFromString("_call");
  PyObject *method = PyObject_GetAttr(self, name);
  if (!method)
    return nullptr;
  PyObject *result = PyObject_Call(method, args, kwargs);
  Py_DECREF(method);
  return result;
}

void setLast(FastCalls *self, PyObject *last) {
  Py_XINCREF(last);
  Py_XSETREF(self->last, last);
}

float *workspace(int64_t floats) {
  thread_local std::vector<float> storage;
  return launch::alignedWorkspace(storage, floats);
}

// Runs a kernel entry; nullptr (no error set) when a parameter no longer
// matches, so the caller takes the full path.
PyObject *runKernel(FastCalls *self, const Entry &e, const TorchTable *table,
                    const TensorView *views, bool &missed) {
  std::array<void *, 2 * kMaxArgs> buffers;
  size_t n = 0;
  for (const Input &in : e.inputs) {
    if (in.arg >= 0) {
      buffers[n++] = views[in.arg].data;
      continue;
    }
    TensorView v;
    if (!plainTensor(table, in.param, v) || !in.layout.matches(v)) {
      missed = true;
      return nullptr;
    }
    buffers[n++] = v.data;
  }
  std::array<PyObject *, kMaxArgs> outs{};
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const Layout &o = e.outputs[i];
    outs[i] = table->empty(o.sizes.data(), o.dims, o.element, &buffers[n++]);
    if (!outs[i]) {
      for (size_t j = 0; j < i; ++j)
        Py_DECREF(outs[j]);
      return nullptr;
    }
  }
  bool failed = false;
  std::string message;
  LaunchArgs launch{buffers.data(), e.strides.data(), e.rows, e.cols,
                    e.workspace_floats ? workspace(e.workspace_floats) : nullptr};
  if (e.rows * e.cols < kReleaseGilElements) {
    // Small: the native entry on this thread, as Kernel::run does when its
    // cost model finds the call not worth splitting (and any split gives
    // the same bits).
    for (int64_t r = 0; r < e.rows; r += e.block_rows)
      e.native(&launch, r, std::min(e.rows, r + e.block_rows));
  } else {
    Py_BEGIN_ALLOW_THREADS try {
      e.kernel->runEntry(launch, e.threads); // split across the pool as run() splits
    } catch (const std::exception &ex) {     // cannot happen for a checked entry
      failed = true;
      message = ex.what();
    }
    Py_END_ALLOW_THREADS
  }
  PyObject *result = nullptr;
  if (failed) {
    PyErr_SetString(PyExc_RuntimeError, message.c_str());
  } else if (!e.tuple) {
    result = outs[e.pick[0]];
    Py_INCREF(result);
  } else {
    result = PyTuple_New(static_cast<Py_ssize_t>(e.pick.size()));
    for (size_t i = 0; result && i < e.pick.size(); ++i) {
      Py_INCREF(outs[e.pick[i]]);
      PyTuple_SET_ITEM(result, static_cast<Py_ssize_t>(i), outs[e.pick[i]]);
    }
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    Py_DECREF(outs[i]);
  if (result)
    setLast(self, e.last);
  return result;
}

PyObject *call(PyObject *object, PyObject *args, PyObject *kwargs) {
  auto *self = reinterpret_cast<FastCalls *>(object);
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if ((kwargs && PyDict_GET_SIZE(kwargs)) || self->check || self->entries->empty() || n > kMaxArgs)
    return slowCall(object, args, kwargs);
  const TorchTable *table = nullptr;
  try {
    table = torchTable();
  } catch (py::error_already_set &e) { // importing the adapter failed
    e.restore();
    return nullptr;
  }
  if (!table || table->autocast())
    return slowCall(object, args, kwargs);
  std::array<TensorView, kMaxArgs> views;
  bool viewed = false;
  for (size_t k = 0; k < self->entries->size(); ++k) {
    std::shared_ptr<Entry> hold = (*self->entries)[k];
    const Entry &e = *hold;
    if (e.args.size() != static_cast<size_t>(n))
      continue;
    if (!viewed) {
      for (Py_ssize_t i = 0; i < n; ++i)
        if (!plainTensor(table, PyTuple_GET_ITEM(args, i), views[i]))
          return slowCall(object, args, kwargs);
      viewed = true;
    }
    bool same = true;
    for (Py_ssize_t i = 0; same && i < n; ++i)
      same = e.args[i].matches(views[i]);
    if (!same)
      continue;
    if (e.forward) {
      PyObject *result = PyObject_Call(e.forward, args, nullptr);
      if (result)
        setLast(self, e.last);
      return result;
    }
    bool missed = false;
    PyObject *result = runKernel(self, e, table, views.data(), missed);
    if (!missed)
      return result;
    break;
  }
  return slowCall(object, args, kwargs);
}

// Registers an entry for `args` (fast_call_entry.h); False when not
// registered.
bool registerEntry(FastCalls *self, py::tuple args, py::object last, py::object forward,
                   py::object kernel, py::list sources, py::object pick) {
  if (self->entries->size() >= kMaxEntries)
    return false;
  std::shared_ptr<Entry> entry = makeEntry(args, last, forward, kernel, sources, pick);
  if (!entry)
    return false;
  self->entries->push_back(std::move(entry));
  return true;
}

void clearEntries(FastCalls *self) {
  if (!self->entries)
    return;
  std::vector<std::shared_ptr<Entry>> entries;
  entries.swap(*self->entries); // the decrefs may run Python code
}

int traverse(PyObject *object, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<FastCalls *>(object);
  Py_VISIT(self->last);
  if (self->entries)
    for (const std::shared_ptr<Entry> &p : *self->entries) {
      Entry &e = *p;
      Py_VISIT(e.last);
      Py_VISIT(e.forward);
      for (Input &i : e.inputs)
        Py_VISIT(i.param);
    }
  return 0;
}

int clear(PyObject *object) {
  auto *self = reinterpret_cast<FastCalls *>(object);
  Py_CLEAR(self->last);
  clearEntries(self);
  return 0;
}

PyObject *create(PyTypeObject *type, PyObject *, PyObject *) {
  PyObject *object = type->tp_alloc(type, 0);
  if (!object)
    return nullptr;
  reinterpret_cast<FastCalls *>(object)->entries = new std::vector<std::shared_ptr<Entry>>();
  return object;
}

void destroy(PyObject *object) {
  PyObject_GC_UnTrack(object);
  clear(object);
  delete reinterpret_cast<FastCalls *>(object)->entries;
  Py_TYPE(object)->tp_free(object);
}

PyMemberDef members[] = {
    {"last", T_OBJECT, offsetof(FastCalls, last), 0,
     "(specialization or None, fallback reason) of the last call"},
    {"check", T_BOOL, offsetof(FastCalls, check), 0, "run eager alongside and compare"},
    {nullptr, 0, 0, 0, nullptr}};

PyTypeObject fastCallsType = {PyVarObject_HEAD_INIT(nullptr, 0)};

} // namespace

void defineFastCalls(py::module_ &m) {
  PyTypeObject &t = fastCallsType;
  t.tp_name = "lanejit._lanejit.FastCalls";
  t.tp_basicsize = sizeof(FastCalls);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_doc = "Base of lanejit.torch's compiled callable: the cached call path (docs/torch.md)";
  t.tp_new = create;
  t.tp_dealloc = destroy;
  t.tp_traverse = traverse;
  t.tp_clear = clear;
  t.tp_call = call;
  t.tp_members = members;
  if (PyType_Ready(&t) < 0)
    throw py::error_already_set();
  py::handle type(reinterpret_cast<PyObject *>(&t));
  m.add_object("FastCalls", type.inc_ref());
  m.def(
      "_fast_register",
      [](py::handle self, py::tuple args, py::object last, py::object forward, py::object kernel,
         py::list sources, py::object pick) {
        if (!PyObject_TypeCheck(self.ptr(), &fastCallsType))
          throw py::type_error("lanejit: _fast_register needs a FastCalls");
        return registerEntry(reinterpret_cast<FastCalls *>(self.ptr()), args, last, forward, kernel,
                             sources, pick);
      },
      py::arg("compiled"), py::arg("args"), py::arg("last"), py::arg("forward") = py::none(),
      py::arg("kernel") = py::none(), py::arg("sources") = py::list(), py::arg("pick") = py::none(),
      "registers a cached call (lanejit.torch internal): forward, or kernel with sources "
      "(argument index or tensor per kernel input) and pick (int or tuple of output indices)");
  m.def("_fast_clear", [](py::handle self) {
    if (PyObject_TypeCheck(self.ptr(), &fastCallsType))
      clearEntries(reinterpret_cast<FastCalls *>(self.ptr()));
  });
  m.def("_fast_count", [](py::handle self) {
    return PyObject_TypeCheck(self.ptr(), &fastCallsType)
               ? reinterpret_cast<FastCalls *>(self.ptr())->entries->size()
               : size_t{0};
  });
}

} // namespace lanejit::python
