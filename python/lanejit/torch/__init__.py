"""lanejit.torch: PyTorch code with its row programs as lanejit kernels
(docs/torch.md).

    import lanejit.torch as ljt
    model = ljt.compile(decoder_block)       # = torch.compile(block, backend="lanejit")
    y = model(x)                             # inference or training
    print(ljt.explain(model, x))             # kernels, programs, what Inductor kept and why

compile() is torch.compile with the "lanejit" Dynamo backend (lanejit.dynamo):
Dynamo captures the code, AOTAutograd makes forward and backward graphs,
their maximal row-program subgraphs become lanejit kernels and Inductor
compiles the rest (or eager runs it: rest="eager").

trace() is the older capture without Dynamo: torch.fx.symbolic_trace, one
specialization per argument shapes, inference only (no grad), the rest run
by torch eagerly; its calls cost the least Python (a C fast path).
"""

import torch

from .compiled import TOLERANCE, CheckError, Compiled, _autocast, _compare
from .explain import Explanation

__all__ = ["compile", "trace", "explain", "CheckError", "Compiled", "Explanation", "TOLERANCE"]


def compile(fn, check=False, dynamic=None, fullgraph=False, **options):  # noqa: A001
    """torch.compile(fn, backend="lanejit", options=options).

    Options: rest ("inductor" or "eager"), inductor (a dict of Inductor
    options for the rest), and lanejit.compile options and switches
    (docs/switches.md). check=True also runs `fn` eagerly on every call
    and raises CheckError when a result differs beyond atol = rtol = 5e-5
    (a bf16 or f16 result, or any under CPU autocast: four units in the
    last place of the type at 1, compiled.TOLERANCES).
    """
    from .. import dynamo  # noqa: F401  (registers the backend by name)
    compiled = torch.compile(fn, backend="lanejit", dynamic=dynamic, fullgraph=fullgraph,
                             options=dict(options) or None)
    if not check:
        try:
            compiled._lanejit_options = dict(options)  # for explain()
        except AttributeError:
            pass
        return compiled
    return _Checked(fn, compiled, options)


class _Checked:
    """compile(check=True): every call also runs eagerly and is compared."""

    def __init__(self, fn, compiled, options):
        self.original, self.compiled, self._lanejit_options = fn, compiled, options
        self._orig_mod = fn

    def __call__(self, *args, **kwargs):
        out = self.compiled(*args, **kwargs)
        with torch.no_grad():
            _compare(out, self.original(*args, **kwargs), autocast=_autocast())
        return out


def trace(fn, check=False, **options):
    """The symbolic_trace capture (inference only, see the module's doc):
    a callable that computes what `fn` does with its row programs as
    lanejit kernels. Other keyword arguments are lanejit.compile options."""
    return Compiled(fn, check=check, **options)


def explain(model, *args):
    """What a call with `args` does: each captured subgraph (the nodes it
    replaced, the lanejit program text) and each node left to torch with
    its reason. `model` is what compile() or trace() returned, or a module
    or function (compiled with compile() here)."""
    if isinstance(model, Compiled):
        spec, reason = model.specialization(args)
        name = getattr(model.graph_module, "_lanejit_name", None) or \
            type(model.original).__name__
        return Explanation(name, spec, reason)
    from .dynamo_explain import explain_compiled
    return explain_compiled(model, args)
