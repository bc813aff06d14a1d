// Building an entry of _lanejit.FastCalls (fast_call_entry.h): every check
// a plain kernel call makes runs here, once, so a hit only guards layouts.
#include "fast_call_entry.h"

#include <lanejit/shape_binding.h>

#include <sched.h>

#include <algorithm>

namespace lanejit::python {
namespace {

int threadsOf(const Kernel &kernel) {
  if (kernel.options().threads)
    return *kernel.options().threads;
  cpu_set_t set; // as Kernel::run without threads=: the CPU affinity count
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 1;
  return std::max(1, CPU_COUNT(&set));
}

} // namespace

std::shared_ptr<Entry> makeEntry(py::tuple args, py::object last, py::object forward,
                                 py::object kernel, py::list sources, py::object pick) {
  const TorchTable *table = torchTable();
  if (!table || table->autocast() || args.size() > kMaxArgs)
    return nullptr;
  auto entry = std::make_shared<Entry>();
  Entry &e = *entry;
  for (size_t i = 0; i < args.size(); ++i) {
    TensorView v;
    if (!plainTensor(table, args[i].ptr(), v))
      return nullptr;
    e.args.push_back(layoutOf(v));
  }
  if (!forward.is_none()) {
    e.forward = forward.inc_ref().ptr();
  } else {
    // Bind as the plain kernel call would: every check of arguments.cpp
    // and Kernel::bind runs once, here.
    e.kernel = kernel.cast<Kernel>();
    const Program &program = e.kernel->program();
    if (sources.size() != program.inputs.size() || program.outputs.size() > kMaxArgs)
      return nullptr;
    py::tuple resolved(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      Input in;
      py::handle s = sources[i];
      if (PyLong_Check(s.ptr())) {
        in.arg = s.cast<int>();
        if (in.arg < 0 || static_cast<size_t>(in.arg) >= args.size())
          return nullptr;
        resolved[i] = args[in.arg];
      } else {
        TensorView v;
        if (!plainTensor(table, s.ptr(), v))
          return nullptr;
        in.layout = layoutOf(v);
        resolved[i] = s;
      }
      e.inputs.push_back(in);
    }
    BoundArguments bound;
    bindInputs(program, resolved, 0, bound);
    std::span<const BufferRef> in(bound.inputs.data(), bound.input_count);
    Shape shape = bindShape(program, in, {});
    py::object made = allocateOutputs(program, shape, bound);
    std::span<const BufferRef> out(bound.outputs.data(), bound.output_count);
    e.kernel->bind(in, out); // throws what a call would
    py::tuple outs = program.outputs.size() == 1 ? py::make_tuple(made) : made.cast<py::tuple>();
    for (size_t i = 0; i < outs.size(); ++i) {
      TensorView v;
      if (!plainTensor(table, outs[i].ptr(), v))
        return nullptr;
      e.outputs.push_back(layoutOf(v));
    }
    for (const BufferRef &b : in)
      e.strides.push_back(b.stride());
    for (const BufferRef &b : out)
      e.strides.push_back(b.stride());
    e.rows = shape.rows;
    e.cols = shape.cols;
    e.threads = threadsOf(*e.kernel);
    e.native = e.kernel->nativeEntry(e.rows, e.cols);
    e.workspace_floats = e.kernel->workspaceFloats(e.cols);
    e.block_rows = std::max(1, e.kernel->options().block_rows);
    e.tuple = !PyLong_Check(pick.ptr());
    for (py::handle k : e.tuple ? pick.cast<py::tuple>() : py::make_tuple(pick)) {
      int index = k.cast<int>();
      if (index < 0 || static_cast<size_t>(index) >= program.outputs.size())
        return nullptr;
      e.pick.push_back(index);
    }
    for (size_t i = 0; i < e.inputs.size(); ++i)
      if (e.inputs[i].arg < 0)
        e.inputs[i].param = py::object(resolved[i]).release().ptr();
  }
  e.last = last.inc_ref().ptr();
  return entry;
}

} // namespace lanejit::python
