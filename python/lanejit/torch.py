"""lanejit.torch: compile PyTorch code; row-program subgraphs run as lanejit
kernels and everything else stays torch (docs/torch.md).

    import lanejit.torch as ljt
    model = ljt.compile(MyDecoderBlock())    # or ljt.compile(fn)
    with torch.no_grad():
        y = model(x)
    print(ljt.explain(model, x))             # what was captured, what was not, why

The module or function is traced with torch.fx.symbolic_trace. For each new
set of argument shapes (so each new column count C) the traced graph is
specialized: maximal subgraphs of row operations over the last dimension
(elementwise math, reductions over dim=-1, softmax, layer_norm, last-dim
slices, chunk/split/cat) become one lanejit kernel each. Calls that cannot
use a kernel run the original code, and explain() says why.
"""

from ._fx_compiled import TOLERANCE, CheckError, Compiled
from ._fx_explain import Explanation

__all__ = ["compile", "explain", "CheckError", "Compiled", "Explanation", "TOLERANCE"]


def compile(fn, check=False, **options):  # noqa: A001  (mirrors lanejit.compile)
    """A callable that computes what `fn` (an nn.Module or a function of
    tensors) does, with its row programs as lanejit kernels.

    check=True also runs `fn` eagerly on every call and raises CheckError
    when a result differs beyond atol = rtol = 5e-5. Other keyword
    arguments are lanejit.compile options and switches (docs/switches.md).
    """
    return Compiled(fn, check=check, **options)


def explain(model, *args):
    """What a call with `args` does: the captured subgraphs (torch nodes
    replaced, lanejit program text) and each node left to torch with its
    reason. `model` is what compile() returned (or a module or function,
    compiled here). Specializes for args if no call did yet."""
    if not isinstance(model, Compiled):
        model = compile(model)
    spec, reason = model.specialization(args)
    name = getattr(model.graph_module, "_lanejit_name", None) or type(model.original).__name__
    return Explanation(name, spec, reason)
