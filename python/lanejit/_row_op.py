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

_kernels = {}  # (program, signature) -> (kernel, parsed signature, call)
compiles = 0   # lanejit compiles this process made for the operator (tests read it)


def kernel_for(program, signature):
    """The compiled kernel, parsed signature and the operator's call for
    them (compiled once per process; lanejit's own cache serves a program
    it has seen in another process)."""
    global compiles
    hit = _kernels.get((program, signature))
    if hit is None:
        sig = json.loads(signature)
        kernel = _lj.compile(_lj.parse(program), **sig.get("options", {}))
        compiles += 1
        hit = _kernels[(program, signature)] = (kernel, sig, _make_call(kernel, sig))
    return hit


def _rows(x):
    if x.dim() < 2:
        return x.reshape(1, -1)
    # The binder takes any row stride for 2-D rows; N-D leading dims must
    # step by whole rows.
    if x.is_contiguous() or (x.dim() == 2 and x.stride(-1) == 1):
        return x
    return x.contiguous()


def _shape_of(ref, shape, n):
    """A function of the inputs giving a shape: the reference input's
    leading dims and n columns, or the static shape."""
    if ref >= 0:
        return lambda inputs: tuple(inputs[ref].shape[:-1]) + (n,)
    shape = tuple(shape)
    return lambda inputs: shape


def _preparer(kind, shape, is_bool):
    if kind == "scalar":
        return lambda x, inputs: x.to(torch.float32)
    base = (lambda x: x.to(torch.float32)) if is_bool else (lambda x: x)
    if kind == "columns":
        return lambda x, inputs: base(x).reshape(-1)
    if kind == "broadcast":
        target = _shape_of(*shape)
        return lambda x, inputs: base(x).expand(target(inputs)).contiguous()
    if is_bool:
        return lambda x, inputs: _rows(base(x))
    return None  # rows as they are (checked in the call)


def _make_call(kernel, sig):
    """The operator's CPU work for one kernel, with everything that does not
    depend on the call's tensors decided here."""
    preps = [_preparer(*k) for k in sig["inputs"]]
    outs = [(_shape_of(ref, shape, n), is_bool) for ref, shape, n, is_bool in sig["outputs"]]
    single = len(outs) == 1

    def call(inputs):
        xs = [_rows(x) if p is None else p(x, inputs) for p, x in zip(preps, inputs)]
        # Outputs allocated here, in torch's shapes: the row count comes
        # from them even when no input is a row tensor (R = 1, or columns).
        ys = [torch.empty(shape(inputs)) for shape, _ in outs]
        rows = [y if y.dim() >= 2 else y.view(1, -1) for y in ys]  # [n] is one row
        kernel(*xs, out=rows[0] if single else tuple(rows))
        return [y != 0 if b else y for y, (_, b) in zip(ys, outs)]
    return call


def _run(program, signature, inputs):
    return kernel_for(program, signature)[2](inputs)


def _fake(program, signature, inputs):
    sig = json.loads(signature)
    return [inputs[0].new_empty(_shape_of(ref, shape, n)(inputs),
                                dtype=torch.bool if is_bool else torch.float32)
            for ref, shape, n, is_bool in sig["outputs"]]


_LIB.impl("row_program", _run, "CPU")
torch.library.register_fake("lanejit::row_program", _fake, lib=_LIB)

row_program = torch.ops.lanejit.row_program.default
