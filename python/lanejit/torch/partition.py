"""Finds the row-program subgraphs of a traced torch.fx graph.

For one set of concrete inputs (a specialization), `record_values` runs the
graph once and keeps every node's value (shapes, and the Python values of
shape arithmetic). `partition` then asks each node's `ops` entry whether
it lowers (a probe lowering over the whole graph, so a node sees its
producers' row values) and grows maximal connected groups of lowerable nodes
with the same row count R, never joining two nodes when a path between them
runs through a node left in torch (that would need torch's result inside the
kernel that feeds it). Each group becomes one kernel.
"""

import torch
import torch.fx

from .lower import Lowering, data_free, rows_of
from .ops import op_name
from .values import Unsupported


class _Recorder(torch.fx.Interpreter):
    def run_node(self, n):
        value = super().run_node(n)
        self.record[n] = value
        return value


def record_values(gm, args):
    r = _Recorder(gm)
    r.record = {}
    result = r.run(*args)
    return r.record, result


def _rows_of_node(node, record):
    """The most rows among the node's tensor operands and result (a
    reduction over another dim then fails to lower with its reason); with
    symbolic row counts, which cannot be ordered, the result's."""
    values = [record.get(a) for a in node.all_input_nodes] + [record.get(node)]
    result = record.get(node)
    if isinstance(result, tuple):
        values += list(result)
        result = next((v for v in result if isinstance(v, torch.Tensor)), None)
    rows = [rows_of(v.shape) for v in values if isinstance(v, torch.Tensor)]
    if not rows:
        return None
    if all(isinstance(r, int) for r in rows):
        return max(rows)
    return rows_of(result.shape) if isinstance(result, torch.Tensor) else rows[0]


_COMPUTE_FREE = {"getitem", "view", "reshape", "contiguous", "float", "to", "type_as", "chunk",
                 "bfloat16", "half",
                 "split", "Identity", "split_with_sizes", "slice", "clone", "expand", "alias",
                 "_unsafe_view", "unsqueeze", "squeeze", "convert_element_type", "_to_copy"}


def _does_compute(node, modules):
    if node.op == "call_module":
        return type(modules[node.target]).__name__ not in _COMPUTE_FREE
    return op_name(node) not in _COMPUTE_FREE


def probe(gm, record):
    """{node: reason} for nodes left to torch, and {node: R} for the rest."""
    modules = dict(gm.named_modules())
    reasons, rows = {}, {}
    lw = Lowering("probe", [], record, modules, 0)
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        value = record.get(node)
        if isinstance(value, torch.Size) or not isinstance(value, (torch.Tensor, tuple)):
            reasons[node] = "shape arithmetic (plain Python)"
            continue
        r = _rows_of_node(node, record)
        if r is None:
            reasons[node] = "no tensor operand"
            continue
        lw.rows = r
        try:
            lw.lower_node(node)
            rows[node] = r
        except Unsupported as e:
            reasons[node] = str(e)
        except Exception as e:  # a lanejit verify error names the IR rule
            reasons[node] = f"{type(e).__name__}: {e}"
    return reasons, rows


def _creates_cycle(members, users):
    """Whether a path leaves `members` and comes back (through torch)."""
    stack = [u for m in members for u in users[m] if u not in members]
    seen = set(stack)
    while stack:
        n = stack.pop()
        for u in users[n]:
            if u in members:
                return True
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return False


def mask_edge(node, record):
    """Whether `node` is a bool tensor computed from shapes alone."""
    v = record.get(node)
    return isinstance(v, torch.Tensor) and v.dtype == torch.bool and data_free(node)


def partition(gm, rows, record):
    """Maximal groups (lists in graph order) of lowerable nodes. A bool mask
    built from shapes alone (ones_like(x).triu(1)) does not count as a path
    back into the group: its data never depends on x's (and a causal one
    becomes index arithmetic, no input)."""
    users = {n: [u for u in n.users if not mask_edge(u, record)] for n in gm.graph.nodes}
    group_of, groups, ids = {}, {}, iter(range(1 << 30))
    for node in gm.graph.nodes:
        if node not in rows:
            continue
        cands = []
        for a in node.all_input_nodes:
            g = group_of.get(a)
            if g is not None and g not in cands and rows[groups[g][0]] == rows[node]:
                cands.append(g)
        chosen = None
        merged = {node}.union(*[set(groups[g]) for g in cands]) if cands else {node}
        if cands and not _creates_cycle(merged, users):
            chosen = cands
        else:
            for g in cands:
                if not _creates_cycle(set(groups[g]) | {node}, users):
                    chosen = [g]
                    break
        if not chosen:
            gid = next(ids)
            groups[gid] = [node]
            group_of[node] = gid
            continue
        target = chosen[0]
        for g in chosen[1:]:
            for m in groups.pop(g):
                group_of[m] = target
                groups[target].append(m)
        groups[target].append(node)
        group_of[node] = target
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    return [sorted(g, key=order.__getitem__) for g in groups.values()]


def drop_data_movers(groups, reasons, modules):
    """Groups that compute nothing (a lone slice or view) stay torch."""
    kept = []
    for g in groups:
        if any(_does_compute(n, modules) for n in g):
            kept.append(g)
            continue
        for n in g:
            reasons[n] = "only moves data (kept in torch unless fused with math)"
    return kept
