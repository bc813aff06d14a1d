"""explain() for a torch.compile'd model (backend="lanejit"): what the
backend did with each graph of one call, as readable text.

It compiles a fresh copy of the model's original code with a recording
backend (the user's compiled model and its caches are untouched), runs it
on the arguments, and reports each graph AOTAutograd produced: the
subgraphs that became lanejit kernels (ATen nodes replaced, program text)
and the nodes left to Inductor or eager, each with its reason.
"""

import functools

import torch


class DynamoExplanation:
    """str() is the text; fields: graphs (GraphRecord list: groups,
    torch_nodes {name: (op, reason)}, error), groups (all graphs' groups),
    torch_nodes (all graphs'), and fallback (None: Dynamo compiles)."""

    def __init__(self, name, graphs, options):
        self.name, self.graphs, self.options = name, graphs, options
        self.fallback = None
        self.groups = [g for r in graphs for g in r.groups]
        self.torch_nodes = {k: v[1] for r in graphs for k, v in r.torch_nodes.items()}

    def __str__(self):
        rest = self.options.get("rest", "inductor")
        lines = [f"lanejit.dynamo: {self.name}: {len(self.graphs)} graph(s), "
                 f"{len(self.groups)} lanejit kernel(s), {len(self.torch_nodes)} node(s) "
                 f"left to {rest}"]
        for r in self.graphs:
            lines.append("")
            lines.append(f"{r.name}: {len(r.groups)} kernel(s)")
            if r.error:
                lines.append(f"  left whole to {rest}: {r.error}")
            for i, g in enumerate(r.groups):
                lines.append(f"  kernel {i}: {len(g['nodes'])} ATen node(s), rows {g['rows']}")
                width = max(len(n) for n, _ in g["nodes"])
                for n, op in g["nodes"]:
                    lines.append(f"    replaced  {n:<{width}}  {op}")
                for k, (src, dtype) in enumerate(zip(g["inputs"], g["input_dtypes"])):
                    lines.append(f"    input     in{k} = {src} ({dtype})")
                for k, ((n, shape), dtype) in enumerate(zip(g["outputs"], g["output_dtypes"])):
                    lines.append(f"    output    out{k} -> {n} {shape} ({dtype})")
                lines.append("    program:")
                lines.extend("      " + line for line in g["program"].splitlines())
            if r.torch_nodes:
                lines.append(f"  left to {rest}:")
                width = max(len(n) for n in r.torch_nodes)
                for n, (op, reason) in r.torch_nodes.items():
                    lines.append(f"    {n:<{width}}  {op:<28}  {reason}")
        return "\n".join(lines)

    __repr__ = __str__


def explain_compiled(model, args, options=None):
    """The explanation of one call of `model` (a torch.compile result, an
    nn.Module or a function) with `args` under the lanejit backend."""
    from .. import dynamo
    original = getattr(model, "_orig_mod", None) or \
        getattr(model, "_torchdynamo_orig_callable", None) or model
    if options is None:
        options = getattr(model, "_lanejit_options", None) or {}
    sink = []
    fresh = torch.compile(original, backend=functools.partial(dynamo.backend, options=options,
                                                              _sink=sink))
    # The backward graph too, when there is one (AOTAutograd otherwise
    # compiles it at the first backward call, which explain does not make).
    with torch._functorch.config.patch(force_non_lazy_backward_lowering=True):
        fresh(*args)
    name = type(original).__name__ if isinstance(original, torch.nn.Module) else \
        getattr(original, "__name__", "fn")
    return DynamoExplanation(name, sink, options)
