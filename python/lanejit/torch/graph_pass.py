"""The pass the Dynamo backend runs on each ATen graph AOTAutograd makes
(the forward, the backward, or the inference graph): every maximal
row-program subgraph becomes one `lanejit::row_program` call, in place;
what is left is compiled by Inductor (or run eagerly).

What it works from: the graph's own fake values (node.meta["val"]), whose
leading dims may be symbolic (a batch or sequence length Dynamo made
dynamic): a kernel's rows are lanejit's symbolic R, so a new length runs
the same kernel. The last dim must be static (kernels are compiled for a
column count). Bool masks computed from shapes alone (a causal mask's
iota, sub, ge) are evaluated once, so the lowering can turn a causal one
into index arithmetic instead of an input.

Runs after: AOTAutograd (functional ATen, decomposed by Inductor's table).
Nothing here raises into torch.compile: a group that does not lower stays
in the graph with its reason, and any other failure leaves the whole graph
as it was (the reason is recorded for explain()).
"""

import json
import operator

import torch
import torch.fx

from .lower import Lowering, data_free, rows_of, static_shape
from .partition import drop_data_movers, partition, probe
from .values import Unsupported
from .row_op import kernel_for, row_program


class GraphRecord:
    """What the pass did with one graph, for explain()."""

    def __init__(self, name):
        self.name = name
        self.groups = []      # dicts: nodes (name, op), program, inputs, outputs
        self.torch_nodes = {}  # node name -> (op, reason)
        self.error = None     # why the graph was left whole, or None


def _is_static(shape):
    return all(isinstance(d, int) for d in static_shape(shape))


def _evaluate(node, values):
    """The real value of a node that depends on shapes and literals alone."""
    if node in values:
        return values[node]
    args = torch.fx.node.map_arg(node.args, lambda a: _evaluate(a, values))
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda a: _evaluate(a, values))
    values[node] = node.target(*args, **kwargs)
    return values[node]


def _record(graph):
    """node -> value: the fake value, a real tensor for a static bool mask
    made from shapes alone, a Python number for a one-element constant."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    record, real = {}, {}
    for n in graph.nodes:
        v = n.meta.get("val")
        record[n] = v
        if n.op != "call_function" or not isinstance(v, torch.Tensor):
            continue
        name = getattr(n.target, "__name__", "")
        if name.startswith(("full.", "scalar_tensor.")) and _is_static(v.shape) and \
                v.numel() == 1 and not n.all_input_nodes:
            value = n.args[0] if name.startswith("scalar_tensor.") else n.args[1]
            if isinstance(value, (bool, int, float)):
                record[n] = bool(value) if v.dtype == torch.bool else float(value)
        elif v.dtype == torch.bool and _is_static(v.shape) and data_free(n):
            try:
                with unset_fake_temporarily():
                    record[n] = _evaluate(n, real)
            except Exception:  # noqa: BLE001  (kept fake: read as an input)
                pass
    return record


def _signature(lw, options):
    """The operator's signature text (see row_op), and notes on inputs
    that are copied for the call."""
    rows = {}  # leading dims (static) -> the first row input with them
    for k, (kind, _, _) in enumerate(lw.input_kinds):
        if kind == "rows":
            rows.setdefault(static_shape(lw.record[lw.inputs[k][0]].shape)[:-1], k)

    def shaped_like(shape, what):
        """[reference row input, None] or [-1, static shape]."""
        ref = rows.get(tuple(shape[:-1]), -1)
        if ref < 0 and not all(isinstance(d, int) for d in shape):
            raise Unsupported(f"{what} has symbolic leading dims that match no row input's")
        return [ref, None if ref >= 0 else list(shape)]

    outputs = [shaped_like(shape, "its result") + [shape[-1] if shape else 1, is_bool, dtype]
               for (_, shape, is_bool), dtype in zip(lw.outputs, lw.output_dtypes)]
    inputs, notes = [], []
    for k, (kind, target, is_bool) in enumerate(lw.input_kinds):
        src, dtype = lw.inputs[k][0], lw.input_dtypes[k]
        if kind == "broadcast":
            inputs.append([kind, shaped_like(target, f"input {src.name}'s broadcast") +
                           [target[-1]], is_bool, dtype])
            notes.append(f"in{k} = {src.name} is broadcast to rows (copied) for each call")
            continue
        inputs.append([kind, None, is_bool, dtype])
        v = lw.record[src]
        if kind == "rows" and isinstance(v, torch.Tensor) and not _rows_addressable(v):
            notes.append(f"in{k} = {src.name} is copied for each call: its strides "
                         f"{list(static_shape(v.stride()))} are not rows of unit stride")
    text = json.dumps({"inputs": inputs, "outputs": outputs, "options": options},
                      sort_keys=True)
    return text, notes


def _rows_addressable(v):
    """Whether the binder takes the tensor as it is (row-major rows, any
    row stride for 2-D): else the operator copies it."""
    try:
        return v.is_contiguous() or (v.dim() == 2 and v.stride(-1) == 1)
    except Exception:  # noqa: BLE001  (symbolic strides it cannot decide)
        return False


def _describe(node):
    t = node.target
    return str(t) if isinstance(t, torch._ops.OpOverload) else getattr(t, "__name__", str(t))


def lower_graph(graph, options, record_out):
    """Replaces the row-program subgraphs of `graph` (an ATen fx.Graph)
    with lanejit::row_program calls. Fills record_out (a GraphRecord)."""
    try:
        _lower(graph, options, record_out)
    except Exception as e:  # noqa: BLE001  (the graph stays as it was)
        record_out.error = f"{type(e).__name__}: {e}"


def _lower(graph, options, rec):
    gm = graph.owning_module
    record = _record(graph)
    reasons, rows = probe(gm, record)
    modules = {}
    plans = []
    for nodes in drop_data_movers(partition(gm, rows, record), reasons, modules):
        members = set(nodes)
        # Every use outside the group (a mask's too): its nodes are erased.
        escaping = [n for n in nodes if any(u not in members for u in n.users)]
        name = f"row_program_{len(rec.groups) + len(plans)}"
        try:
            lw = Lowering(name, nodes, record, modules, rows[nodes[0]])
            program = lw.build(escaping)
            text = str(program)
            signature, notes = _signature(lw, options)
            kernel_for(text, signature)  # compile now: errors are a reason, not a crash
        except Exception as e:  # noqa: BLE001  (Unsupported or a lanejit error)
            for n in nodes:
                reasons[n] = f"its subgraph does not lower: {e}"
            continue
        plans.append((nodes, lw, text, signature, notes))
    # Each group is convex, but two can still need each other's results
    # (a cycle once both are one node): the later one stays in torch.
    while plans and _cycle(graph, [p[0] for p in plans]):
        nodes = plans.pop()[0]
        for n in nodes:
            reasons[n] = "its subgraph and an earlier one would need each other's results"
    # A kernel runs where its last input is ready: it must not move across
    # an in-place operation (Inductor keeps an inference graph's input
    # mutations, a KV-cache update, in the graph).
    order = {n: i for i, n in enumerate(graph.nodes)}
    mutations = [n for n in graph.nodes if n.op == "call_function" and
                 isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable]
    plans = [p for p in plans
             if not _crosses_mutation(order, mutations, p[0], p[1], reasons)]
    # The new nodes' fake values, from the old ones', before the graph
    # changes: what is left can hardly fail half-way.
    fake_mode = _fake_mode(graph)
    vals = []
    for nodes, lw, text, signature, notes in plans:
        if fake_mode is None:
            vals.append(None)
            continue
        with fake_mode:
            vals.append(row_program(text, signature, [src.meta["val"] for src, _, _ in lw.inputs]))
    replaced = {}  # a kernel's result node -> the getitem that now holds it
    for (nodes, lw, text, signature, notes), val in zip(plans, vals):
        sources = [replaced.get(src, src) for src, _, _ in lw.inputs]
        with graph.inserting_before(nodes[0]):
            call = graph.call_function(row_program, (text, signature, sources))
            outs = [graph.call_function(operator.getitem, (call, k))
                    for k in range(len(lw.outputs))]
        if val is not None:
            call.meta["val"] = val
            for o, v in zip(outs, val):
                o.meta["val"] = v
        for (node, _, _), o in zip(lw.outputs, outs):
            node.replace_all_uses_with(o)
            replaced[node] = o
        for n in reversed(nodes):
            graph.erase_node(n)
        rec.groups.append({
            "nodes": [(n.name, _describe(n)) for n in nodes], "program": text,
            "inputs": [s.name for s in sources], "input_dtypes": list(lw.input_dtypes),
            "outputs": [(n.name, [str(d) for d in shape]) for n, shape, _ in lw.outputs],
            "output_dtypes": list(lw.output_dtypes),
            "notes": notes,
            "rows": str(rows_of(lw.outputs[0][1]) if lw.outputs else "")})
    from torch._inductor.pattern_matcher import stable_topological_sort
    stable_topological_sort(graph)
    graph.eliminate_dead_code()
    graph.lint()
    alive = {n for n in graph.nodes}
    for n, reason in reasons.items():
        if n in alive and n.op == "call_function" and n.target is not operator.getitem:
            rec.torch_nodes[n.name] = (_describe(n), reason)


def _crosses_mutation(order, mutations, nodes, lw, reasons):
    lo = min(order[n] for n in nodes)
    hi = max([order[n] for n in nodes] + [order[src] for src, _, _ in lw.inputs])
    for n in mutations:
        if lo < order[n] < hi:
            for m in nodes:
                reasons[m] = f"its kernel would move across the in-place {n.target} ({n.name})"
            return True
    return False


def _cycle(graph, groups):
    """Whether the graph with each group collapsed to one node has a cycle."""
    unit = {}
    for i, nodes in enumerate(groups):
        for n in nodes:
            unit[n] = ("g", i)
    deps = {}
    for n in graph.nodes:
        u = unit.get(n, n)
        for a in n.all_input_nodes:
            ua = unit.get(a, a)
            if ua != u:
                deps.setdefault(u, set()).add(ua)
        deps.setdefault(u, set())
    waiting = {u: len(d) for u, d in deps.items()}
    users = {}
    for u, d in deps.items():
        for a in d:
            users.setdefault(a, []).append(u)
    ready = [u for u, w in waiting.items() if w == 0]
    done = 0
    while ready:
        u = ready.pop()
        done += 1
        for v in users.get(u, []):
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    return done != len(deps)


def _fake_mode(graph):
    from torch._guards import detect_fake_mode
    vals = [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]
    return detect_fake_mode([v for v in vals if isinstance(v, torch.Tensor)])
