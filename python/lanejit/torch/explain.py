"""explain(): what lanejit.torch did with one call, as readable text.

One section per captured subgraph (the torch nodes it replaced, its inputs
and outputs, the lanejit program text), then a table of the nodes left to
torch with the reason for each; or, when the call runs the original code,
why.
"""

import torch


def _describe(node):
    if node.op == "call_module":
        return f"{node.target} (module)"
    target = getattr(node.target, "__name__", node.target)
    return f"{target}()" if node.op == "call_function" else f".{target}()"


def _source_name(src):
    return src.name if isinstance(src, torch.fx.Node) else "module parameter"


class Explanation:
    """The text (str()), plus fields a program can read: groups (a list of
    dicts with nodes, program and kernel), torch_nodes ({name: reason}) and
    fallback (None or the reason the whole call ran in torch)."""

    def __init__(self, name, spec, fallback):
        self.name = name
        self.fallback = fallback
        self.groups = []
        self.torch_nodes = {}
        if spec is not None:
            for g in spec.groups:
                self.groups.append({"nodes": [n.name for n in g.nodes], "program": str(g.program),
                                    "kernel": g.kernel, "group": g})
            self.torch_nodes = {n.name: spec.reasons[n] for n in spec.torch_nodes}
        self._spec = spec

    def __str__(self):
        lines = [f"lanejit.torch: {self.name}"]
        if self.fallback:
            lines.append(f"  the whole call runs in torch: {self.fallback}")
            return "\n".join(lines)
        spec = self._spec
        lines[0] += (f": {len(spec.groups)} subgraph(s) run as lanejit kernels, "
                     f"{len(spec.torch_nodes)} node(s) left to torch")
        for i, g in enumerate(spec.groups):
            lw = g.lowering
            lines.append("")
            lines.append(f"subgraph {i}: {len(g.nodes)} torch node(s) -> kernel "
                         f"'{g.program.name}'")
            width = max(len(n.name) for n in g.nodes)
            for n in g.nodes:
                lines.append(f"  replaced  {n.name:<{width}}  {_describe(n)}")
            for k, ((src, _, _), dtype) in enumerate(zip(lw.inputs, lw.input_dtypes)):
                lines.append(f"  input     in{k} = {_source_name(src)} ({dtype})")
            for k, ((node, shape, is_bool), dtype) in enumerate(zip(lw.outputs,
                                                                   lw.output_dtypes)):
                kind = "bool, as 0/1" if is_bool else dtype
                lines.append(f"  output    out{k} -> {node.name} {list(shape)} ({kind})")
            lines.append("  program:")
            lines.extend("    " + line for line in str(g.program).splitlines())
        if spec.torch_nodes:
            lines.append("")
            lines.append("left to torch:")
            width = max(len(n.name) for n in spec.torch_nodes)
            for n in spec.torch_nodes:
                lines.append(f"  {n.name:<{width}}  {_describe(n):<28}  {spec.reasons[n]}")
        return "\n".join(lines)

    __repr__ = __str__
