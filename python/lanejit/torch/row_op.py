"""The torch operator a captured subgraph becomes inside a Dynamo graph:
`torch.ops.lanejit.row_program(program, signature, inputs) -> Tensor[]`.

It is defined and run in C++ (python/torch/row_program_op.cpp): Inductor's
wrapper (or AOTAutograd's eager graph) calls it like any ATen operator,
with no Python code between the call and the kernel. It is functional
(fresh outputs, inputs untouched), so Inductor schedules it as an extern
kernel and compiles everything around it. Its arguments carry all
it needs as text: the lanejit program and a JSON signature (how each input
is prepared, how each output is shaped, the compile options), so code that
Inductor caches on disk and reloads in another process stays valid; the
kernel itself comes from lanejit's compile cache, keyed by that text.

Signature: {"inputs": [[kind, shape or null, is_bool, storage], ...],
"outputs": [[reference input or -1, static shape or null, n, is_bool,
storage], ...], "options": {...}}; a "broadcast" input's shape is [reference
input or -1, static shape or null, n]. A shape's leading dims are its
reference input's (a row input with the same leading dims, symbolic ones
included), else the static shape's. storage is the buffer's element type as
the program declares it ("f32", "bf16" or "f16"; bools are "f32", as 0/1;
"f32" when absent): inputs of that type are read as they are, outputs are
allocated in it.
"""

import json

import torch

from .. import _lanejit as _lj
from .lower import TORCH_DTYPE
from .. import _lanejit_torch  # defines the operator (python/torch/row_program_op.cpp)

_kernels = {}  # (program, signature) -> compiled kernel, kept alive for the operator
compiles = 0   # lanejit compiles this process made for the operator (tests read it)


def kernel_for(program, signature):
    """The kernel for this program and signature, compiled once per process
    (lanejit's own cache serves a program seen in another process) and
    registered with the operator's C++ side."""
    global compiles
    kernel = _kernels.get((program, signature))
    if kernel is None:
        sig = json.loads(signature)
        kernel = _lj.compile(_lj.parse(program), **sig.get("options", {}))
        compiles += 1
        _lanejit_torch.register_row_program(program, signature, kernel, sig["inputs"],
                                            sig["outputs"])
        _kernels[(program, signature)] = kernel
    return kernel


def _fake(program, signature, inputs):
    """Output shapes and dtypes, for Dynamo's and Inductor's fake tensors."""
    def shape(ref, fixed, n):
        return tuple(inputs[ref].shape[:-1]) + (n,) if ref >= 0 else tuple(fixed)
    sig = json.loads(signature)
    def dtype(is_bool, storage):
        return torch.bool if is_bool else TORCH_DTYPE[storage[0] if storage else "f32"]
    return [inputs[0].new_empty(shape(ref, fixed, n), dtype=dtype(is_bool, storage))
            for ref, fixed, n, is_bool, *storage in sig["outputs"]]


torch.library.register_fake("lanejit::row_program", _fake)

row_program = torch.ops.lanejit.row_program.default
