"""`torch.compile(model, backend="lanejit")`: a Dynamo backend.

Dynamo hands each FX graph it captured to `backend`. The graph goes through
AOTAutograd (so training works: a forward and a backward graph, each
functional ATen, decomposed by Inductor's table), and in each graph the
maximal row-program subgraphs become lanejit kernels (graph_pass); the
rest is compiled by Inductor (the default) or run eagerly
(options={"rest": "eager"}). Graph breaks, guards and recompiles are
torch's own. A batch or sequence length Dynamo makes dynamic is lanejit's
symbolic row count, so a new length reuses the compiled kernels.

Registered under the name "lanejit" through the `torch_dynamo_backends`
entry point (pyproject.toml), and by `import lanejit.dynamo`.

Options (torch.compile(..., options={...})):
  rest        "inductor" (default) or "eager": who runs what is not a row program
  inductor    a dict of Inductor options for the rest (as torch.compile's own)
  any other   lanejit.compile options and switches (docs/switches.md),
              e.g. {"threads": 2}
"""

import collections
import functools
import hashlib
import os

import torch

from .torch.graph_pass import GraphRecord, lower_graph

__all__ = ["backend", "records"]

# The graphs the backend lowered in this process (the last 256), oldest
# first. A graph Inductor found in its cache is not lowered again and has
# no record; lanejit.torch.explain compiles a fresh copy for its own.
records = collections.deque(maxlen=256)


@functools.lru_cache(maxsize=None)
def _package_hash():
    """The package's files (its Python, the lanejit.torch subpackage's,
    where the pass lives, and its compiled modules), by name, size and
    modification time."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for sub in ("", "torch"):
        folder = os.path.join(here, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith((".py", ".so")):
                st = os.stat(os.path.join(folder, name))
                h.update(f"{sub}/{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _pass_uuid(options):
    """Inductor's cache key for the pass: the package and the options (the
    operator's arguments carry the programs, so a cached graph stays valid
    in another process)."""
    return hashlib.sha256((_package_hash() + repr(sorted(options.items()))).encode()).hexdigest()


def _lower_into(graph, options, sink):
    """The pass on one graph, its record appended to sink."""
    rec = GraphRecord(f"graph {len(sink)}")
    lower_graph(graph, options, rec)
    sink.append(rec)


def _make_pass(options, sink):
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class RowProgramPass(CustomGraphPass):
        def __call__(self, graph):
            _lower_into(graph, options, sink)

        def uuid(self):
            # None (no Inductor cache) when explain() needs the pass to run.
            return None if sink is not records else _pass_uuid(options)

    return RowProgramPass()


def _eager_compiler(options, sink, gm, example_inputs):
    from torch._functorch.aot_autograd import make_boxed_func
    _lower_into(gm.graph, options, sink)
    gm.recompile()
    return make_boxed_func(gm.forward)


def _split(options):
    options = dict(options or {})
    rest = options.pop("rest", "inductor")
    if rest not in ("inductor", "eager"):
        raise ValueError(f"lanejit backend: rest={rest!r} (use 'inductor' or 'eager')")
    inductor = dict(options.pop("inductor", {}) or {})
    return rest, inductor, options


def backend(gm, example_inputs, options=None, _sink=None):
    """The Dynamo backend (a graph and its example inputs -> a callable)."""
    rest, inductor, lanejit_options = _split(options)
    sink = records if _sink is None else _sink
    if rest == "inductor":
        from torch._inductor.compile_fx import compile_fx
        patches = dict(inductor)
        patches["post_grad_custom_pre_pass"] = _make_pass(lanejit_options, sink)
        return compile_fx(gm, example_inputs, config_patches=patches)
    from torch._dynamo.backends.common import aot_autograd
    from torch._inductor.decomposition import select_decomp_table
    compiler = functools.partial(_eager_compiler, lanejit_options, sink)
    return aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                        decompositions=select_decomp_table())(gm, example_inputs)


def _register():
    # Not while torch loads the entry point (it registers what load() gives).
    from torch._dynamo.backends.registry import _BACKENDS, _COMPILER_FNS, register_backend
    if _BACKENDS.get("lanejit") is None and "lanejit" not in _COMPILER_FNS:
        register_backend(name="lanejit")(backend)


_register()
