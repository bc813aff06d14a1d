"""The torch operator a captured subgraph becomes inside a Dynamo graph:
`torch.ops.lanejit.row_program(program, signature, inputs) -> Tensor[]`.

Inductor (or AOTAutograd's eager graph) calls it like any ATen operator; it
is functional (fresh outputs, inputs untouched), so Inductor schedules it as
an extern kernel and compiles everything around it. Its arguments carry all
it needs as text: the lanejit program and a JSON signature (how each input
is prepared, how each output is shaped, the compile options), so code that
Inductor caches on disk and reloads in another process stays valid; the
kernel itself comes from lanejit's compile cache, keyed by that text.

Signature: {"inputs": [[kind, shape or null, is_bool], ...], "outputs":
[[reference input or -1, static shape or null, n, is_bool], ...],
"options": {...}}; a "broadcast" input's shape is [reference input or -1,
static shape or null, n]. A shape's leading dims are its reference input's
(a row input with the same leading dims, symbolic ones included), else the
static shape's.
"""

import json

import torch

from . import _lanejit as _lj

_LIB = torch.library.Library("lanejit", "DEF")
_LIB.define("row_program(str program, str signature, Tensor[] inputs) -> Tensor[]")

_kernels = {}  # (program, signature) -> (kernel, parsed signature)
compiles = 0   # lanejit compiles this process made for the operator (tests read it)


def kernel_for(program, signature):
    """The compiled kernel and parsed signature (compiled once per process)."""
    global compiles
    hit = _kernels.get((program, signature))
    if hit is None:
        sig = json.loads(signature)
        kernel = _lj.compile(_lj.parse(program), **sig.get("options", {}))
        compiles += 1
        hit = _kernels[(program, signature)] = (kernel, sig)
    return hit


def _prepare(x, kind, shape, is_bool):
    if kind == "scalar":
        return x.to(torch.float32)
    if is_bool:
        x = x.to(torch.float32)
    if kind == "columns":
        return x.reshape(-1)
    if kind == "broadcast":
        return x.expand(shape).contiguous()  # shape: resolved by _run
    if x.dim() < 2:
        return x.reshape(1, -1)
    # The binder takes any row stride for 2-D rows; N-D leading dims must
    # step by whole rows.
    if x.is_contiguous() or (x.dim() == 2 and x.stride(-1) == 1):
        return x
    return x.contiguous()


def _out_shape(inputs, ref, shape, n):
    if ref >= 0:
        return tuple(inputs[ref].shape[:-1]) + (n,)
    return tuple(shape)


def _run(program, signature, inputs):
    kernel, sig = kernel_for(program, signature)
    xs = [_prepare(x, kind, _out_shape(inputs, *shape) if kind == "broadcast" else None, b)
          for x, (kind, shape, b) in zip(inputs, sig["inputs"])]
    # Outputs allocated here, in torch's shapes: the row count comes from
    # them even when no input is a row tensor (R = 1, or column vectors).
    ys = [torch.empty(_out_shape(inputs, ref, shape, n), dtype=torch.float32)
          for ref, shape, n, _ in sig["outputs"]]
    rows = [y if y.dim() >= 2 else y.view(1, -1) for y in ys]  # [n] is one row
    kernel(*xs, out=rows[0] if len(rows) == 1 else tuple(rows))
    return [y != 0 if o[3] else y for y, o in zip(ys, sig["outputs"])]


def _fake(program, signature, inputs):
    sig = json.loads(signature)
    return [inputs[0].new_empty(_out_shape(inputs, ref, shape, n),
                                dtype=torch.bool if is_bool else torch.float32)
            for ref, shape, n, is_bool in sig["outputs"]]


_LIB.impl("row_program", _run, "CPU")
torch.library.register_fake("lanejit::row_program", _fake, lib=_LIB)

row_program = torch.ops.lanejit.row_program.default
