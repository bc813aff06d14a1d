"""Builds the specialized graph: each captured group replaced by one call.

`kernel_call` makes the callable a group becomes (it prepares the inputs,
runs the lanejit kernel and gives torch-shaped results); `rewrite` emits a
new fx graph in which torch nodes are copied and each group is one
call_function node followed by getitem per result, in an order that keeps
every value defined before its use (Kahn's algorithm, earliest original
node first).
"""

import heapq
import operator

import torch
import torch.fx


def kernel_call(kernel, inputs, outputs, index):
    """The function a group becomes. inputs: (source, getter, prepare);
    outputs: (node, shape, is_bool)."""
    preps = [(getter, prep) for _, getter, prep in inputs]
    shapes = [(torch.Size(shape), is_bool) for _, shape, is_bool in outputs]
    plain = not any(b for _, b in shapes)

    def finish(y, shape, is_bool):
        if y.shape != shape:
            y = y.reshape(shape)
        return y != 0 if is_bool else y

    def run(*args):
        xs = [prep(getter(a) if getter else a) for (getter, prep), a in zip(preps, args)]
        try:
            ys = kernel(*xs)
        except (TypeError, ValueError):
            # A view whose rows are not evenly strided: copy and try again.
            ys = kernel(*[x.contiguous() if x.dim() else x for x in xs])
        if not isinstance(ys, tuple):
            ys = (ys,)
        if plain and all(y.shape == s for y, (s, _) in zip(ys, shapes)):
            return ys
        return tuple(finish(y, s, b) for y, (s, b) in zip(ys, shapes))

    run.__name__ = f"lanejit_kernel_{index}"
    return run


def rewrite(gm, groups, calls):
    """A GraphModule computing what gm does, with groups[i] replaced by
    calls[i] (made by kernel_call; its inputs' sources are fx nodes)."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    unit_of = {}
    units = []
    for g, call in zip(groups, calls):
        units.append(("group", g, call))
        for n in g:
            unit_of[n] = len(units) - 1
    for n in gm.graph.nodes:
        if n not in unit_of:
            units.append(("node", [n], None))
            unit_of[n] = len(units) - 1
    deps = [set() for _ in units]
    for i, (kind, members, call) in enumerate(units):
        # A kernel waits only for its inputs (a mask it computes from
        # indices is no input, though a member node read it in torch).
        needed = [s for s in call[1] if s is not None] if kind == "group" else \
            members[0].all_input_nodes
        for a in needed:
            if unit_of[a] != i:
                deps[i].add(unit_of[a])
    waiting = [len(d) for d in deps]
    dependents = [[] for _ in units]
    for i, d in enumerate(deps):
        for j in d:
            dependents[j].append(i)
    key = [min(order[m] for m in members) for _, members, _ in units]
    ready = [(key[i], i) for i in range(len(units)) if waiting[i] == 0]
    heapq.heapify(ready)
    graph, env = torch.fx.Graph(), {}
    while ready:
        _, i = heapq.heappop(ready)
        kind, members, call = units[i]
        if kind == "node":
            # A node reading a value only kept inside a kernel (ones_like of
            # a kernel's intermediate, for a mask the kernel computes from
            # indices) is not emitted; if anything still needs it, the
            # output is missing below and the caller falls back.
            if all(a in env for a in members[0].all_input_nodes):
                env[members[0]] = graph.node_copy(members[0], lambda n: env[n])
        else:
            fn, sources, outs = call
            if any(s not in env for s in sources if s is not None):
                raise RuntimeError("lanejit.torch: a kernel input is computed from the kernel")
            args = tuple(env[s] if isinstance(s, torch.fx.Node) else None for s in sources)
            node = graph.call_function(fn, args)
            for k, out in enumerate(outs):
                env[out] = graph.call_function(operator.getitem, (node, k))
        for j in dependents[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, (key[j], j))
    if not any(n.op == "output" for n in graph.nodes):
        raise RuntimeError("lanejit.torch: the rewritten graph lost its output (a cycle)")
    out = torch.fx.GraphModule(gm, graph)
    out.graph.eliminate_dead_code()  # e.g. a causal mask the kernel computes from indices
    out.recompile()
    return out
