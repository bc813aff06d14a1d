"""The direct call: when a specialization's graph is nothing but one kernel
applied to the call's arguments (and module parameters) whose results are
the graph's output, as for each of the six seed operators, a call skips the
GraphModule's forward, kernel_call's per-input preparation and its result
reshaping, and calls the kernel itself.

It is only built for one key of the fast guard (compiled.Compiled),
which fixes every argument's shape, dtype, device, contiguity and
requires_grad, so the preparations that were the identity when it was
built stay so; the first call through it is checked to give the shapes
torch gives, else the specialization's forward is used.
"""

import operator

import torch.fx

from .lower import TORCH_DTYPE


def direct_call(spec, args):
    """(function of the call's arguments, this call's result, (kernel,
    sources, pick)), or None when the specialization is not one kernel on
    its arguments. sources has, per kernel input, the argument's index or
    the parameter tensor; pick is the output index the call returns, or a
    tuple of them (what _lanejit.FastCalls registers)."""
    if len(spec.groups) != 1:
        return None
    group = spec.groups[0]
    nodes = list(spec.module.graph.nodes)
    places = [n for n in nodes if n.op == "placeholder"]
    calls = [n for n in nodes if n.op == "call_function" and n.target is not operator.getitem]
    if len(calls) != 1 or len(places) != len(args):
        return None
    call = calls[0]
    items = {n: n.args[1] for n in nodes
             if n.op == "call_function" and n.target is operator.getitem and n.args[0] is call}
    attrs = {n: _attr(spec.module, n.target) for n in nodes if n.op == "get_attr"}
    if len(places) + len(attrs) + 1 + len(items) + 1 != len(nodes):
        return None  # a torch node besides the kernel
    out = nodes[-1].args[0]
    if isinstance(out, torch.fx.Node) and out in items:
        pick = items[out]
    elif isinstance(out, tuple) and all(isinstance(o, torch.fx.Node) and o in items for o in out):
        pick = tuple(items[o] for o in out)
    else:
        return None
    outputs = group.lowering.outputs
    if any(is_bool for _, _, is_bool in outputs):
        return None
    slots = []  # (True, argument index) or (False, a parameter tensor)
    for src, (_, getter, prep) in zip(call.args, group.lowering.inputs):
        if getter is not None:
            t = getter(None)
            if prep(t) is not t:
                return None
            slots.append((False, t))
        elif isinstance(src, torch.fx.Node) and src in attrs:
            t = attrs[src]  # a parameter read by get_attr, as forward would
            if not isinstance(t, torch.Tensor) or prep(t) is not t:
                return None
            slots.append((False, t))
        elif isinstance(src, torch.fx.Node) and src.op == "placeholder":
            i = places.index(src)
            if prep(args[i]) is not args[i]:
                return None
            slots.append((True, i))
        else:
            return None
    fn = _caller(group.kernel, slots, len(args))
    fn = _picker(fn, pick, len(outputs))
    result = fn(*args)
    got = result if isinstance(result, tuple) else (result,)
    picked = pick if isinstance(pick, tuple) else (pick,)
    want = [(outputs[k][1], TORCH_DTYPE[group.lowering.output_dtypes[k]]) for k in picked]
    if len(got) != len(want) or any(not isinstance(y, torch.Tensor) or y.shape != shape
                                    or y.dtype != dtype
                                    for y, (shape, dtype) in zip(got, want)):
        return None
    sources = [v for _, v in slots]
    return fn, result, (group.kernel, sources, pick)


def _attr(module, target):
    for part in target.split("."):
        module = getattr(module, part)
    return module


def _caller(kernel, slots, nargs):
    if slots == [(True, i) for i in range(nargs)]:
        return kernel  # the arguments in the kernel's order
    # A lambda with the parameters bound as closure constants, e.g.
    # `lambda a0: kernel(c1, c2, a0)`: cheaper than building a list per call.
    names = {"kernel": kernel}
    parts = []
    for is_arg, v in slots:
        if is_arg:
            parts.append(f"a{v}")
        else:
            names[f"c{len(names)}"] = v
            parts.append(f"c{len(names) - 1}")
    params = ", ".join(f"a{i}" for i in range(nargs))
    return eval(f"lambda {params}: kernel({', '.join(parts)})", names)  # noqa: S307


def _picker(fn, pick, n_outputs):
    if n_outputs == 1 and pick == 0:
        return fn  # the kernel returns its one result, not a tuple
    if n_outputs == 1:
        return lambda *a: (lambda y: tuple(y for _ in pick))(fn(*a))  # (y,) or (y, y)
    if isinstance(pick, tuple):
        if pick == tuple(range(n_outputs)):
            return fn
        return lambda *a: (lambda ys: tuple(ys[k] for k in pick))(fn(*a))
    return lambda *a: fn(*a)[pick]
