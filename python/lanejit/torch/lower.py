"""Lowers one captured subgraph of a torch.fx graph to a lanejit Program.

The subgraph's nodes are visited in graph order; each becomes expressions
through its `ops` entry. Tensors from outside the subgraph become
program inputs, classified by their concrete shape against the subgraph's
R rows: row tensors [..., n] (leading dims flattened into R), column
vectors [n] (parameters, buffers, any [1, ..., 1, n]), scalars (0-d), and
anything else that broadcasts to the consumer's shape, copied to rows per
call. A bool mask computed from shapes alone that is causal (column <=
row mod T + k, or its negation) becomes index arithmetic instead of an input.
Nodes used outside become outputs [R, n] (bools as 0/1 floats).

Element types: every value inside a program is f32. An input of
torch.bfloat16 or torch.float16 is declared bf16 or f16, so the kernel loads
its storage and widens it exactly; an output is declared in its node's
dtype, so the kernel rounds once where it stores it. A cast inside the
subgraph (`.float()`, `.to(torch.bfloat16)`, ATen's convert_element_type)
computes nothing: as in Inductor's fused kernels, intermediate values stay
f32 and only the stores round.
"""

import math

import sympy
import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx import Node

from .. import _lanejit as _lj
from .ops import lookup
from .values import Cols, Uniform, Unsupported, elementwise


# torch dtype -> the lanejit buffer type a kernel stores it as.
STORAGE = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
TORCH_DTYPE = {v: k for k, v in STORAGE.items()}


def storage_of(dtype):
    """The buffer type for a torch dtype (bool: f32, as 0/1)."""
    return "f32" if dtype == torch.bool else STORAGE[dtype]


def static_dim(d):
    """A dimension as an int, or (symbolic, from Dynamo's fake tensors) as
    its sympy expression, so comparing two never adds a shape guard."""
    if isinstance(d, torch.SymInt):
        d = d.node.expr
    if isinstance(d, sympy.Basic):
        return int(d) if d.is_number else d
    return int(d)


def static_shape(shape):
    return tuple(static_dim(d) for d in shape)


def rows_of(shape):
    """The row count R of a [..., n] shape (an int, or a sympy expression
    when a leading dim is symbolic: then equal row counts compare equal)."""
    shape = static_shape(shape)
    r = math.prod(shape[:-1]) if len(shape) else 1
    return int(r) if not isinstance(r, int) and r.is_number else r


def data_free(node, seen=None):
    """Whether `node`'s value depends only on shapes and literals (not on
    any input's or parameter's data), so it is fixed for a specialization."""
    seen = {} if seen is None else seen
    if node in seen:
        return seen[node]
    seen[node] = False
    if node.op in ("placeholder", "get_attr", "output"):
        result = False
    elif node.op == "call_method" and node.target in ("size", "dim"):
        result = True
    elif node.op == "call_function" and getattr(node.target, "__name__", "") == "getattr":
        result = node.args[1] in ("shape", "dtype", "device", "ndim")
    elif node.op == "call_module":
        result = False
    elif getattr(node.target, "__name__", node.target) in ("ones_like", "zeros_like", "full_like"):
        # Only the first argument's shape matters, not its data.
        result = all(data_free(a, seen) for a in node.all_input_nodes[1:])
    else:
        name = getattr(node.target, "__name__", str(node.target))
        if "rand" in name or "normal" in name or "empty" in name:
            result = False
        else:
            result = all(data_free(a, seen) for a in node.all_input_nodes)
    seen[node] = result
    return result


def _causal(mask, rows_per_block):
    """Index expression for a [R, n] bool mask equal to col <= (r mod T)+k
    or to col > (r mod T)+k (T = rows_per_block), else None."""
    r, n = mask.shape
    if r == 0 or n == 0:
        return None
    row = torch.arange(r).remainder(rows_per_block).unsqueeze(1)
    col = torch.arange(n).unsqueeze(0)
    first = int(mask[0].sum())
    c, rr = _lj.col(_lj.Dim(n), _lj.Dim(0)), _lj.row() % _lj.constant_i32(rows_per_block)
    if torch.equal(mask, col <= row + (first - 1)):
        return c <= rr + _lj.constant_i32(first - 1)
    if torch.equal(mask, col > row + (n - first - 1)):
        return c > rr + _lj.constant_i32(n - first - 1)
    return None


def _broadcasts_to(shape, out_shape):
    """Whether `shape` broadcasts to `out_shape` (static dims, no guards)."""
    if len(shape) > len(out_shape):
        return False
    return all(s == o or s == 1 for s, o in zip(reversed(shape), reversed(out_shape)))


def _rows(v):
    # The binder takes rows with any row stride but N-D leading dims must
    # step by whole rows; a copy is cheaper than a failed call.
    return v if v.is_contiguous() else v.contiguous()


class Lowering:
    def __init__(self, name, nodes, record, modules, rows):
        self.record, self.modules, self.rows = record, modules, rows
        self.nodes = list(nodes)
        self.members = set(self.nodes)
        self.b = _lj.Builder(name)
        self.env = {}
        self.inputs = []      # (source, getter, prepare) in declaration order
        self.input_kinds = []  # (kind, broadcast shape or None, is_bool), as inputs
        self.input_dtypes = []  # the buffer type of each input: "f32", "bf16" or "f16"
        self.outputs = []     # (node, shape, is_bool)
        self.output_dtypes = []  # the buffer type of each output
        self._keys = {}
        self.current = None

    # -- what the op entries call ------------------------------------------
    def const(self, arg):
        if isinstance(arg, Node):
            if isinstance(self.record.get(arg), torch.Tensor):
                raise Unsupported("a tensor where a constant is expected")
            return self.record[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.const(a) for a in arg)
        if isinstance(arg, slice):
            return slice(self.const(arg.start), self.const(arg.stop), self.const(arg.step))
        return arg

    def is_tensor(self, arg):
        return isinstance(arg, Node) and isinstance(self.record.get(arg), torch.Tensor)

    def shape_of(self, arg):
        if isinstance(arg, (list, tuple)):
            arg = arg[0]
        return static_shape(self.record[arg].shape)

    def val_or_none(self, arg):
        return self.env.get(arg) if isinstance(arg, Node) else None

    def val(self, arg):
        if not isinstance(arg, Node):
            if isinstance(arg, (int, float, bool)):
                return float(arg) if not isinstance(arg, bool) else arg
            raise Unsupported(f"argument {arg!r}")
        if arg in self.env:
            return self.env[arg]
        value = self.record[arg]
        if not isinstance(value, torch.Tensor):
            if isinstance(value, bool):
                return value
            if isinstance(value, (int, float)):
                return float(value)
            raise Unsupported(f"argument {arg.name} is a {type(value).__name__}")
        return self._external(arg, value)

    def param(self, node, tensor):
        """A module's parameter (nn.LayerNorm.weight) as a column input."""
        return self._external(("param", id(tensor)), tensor, getter=lambda _: tensor)

    # -- inputs --------------------------------------------------------------
    def _external(self, key, t, getter=None):
        if t.dtype not in STORAGE and t.dtype != torch.bool:
            who = getattr(key, "name", "parameter")
            raise Unsupported(f"input {who} is {t.dtype}, not float32, bfloat16 or float16")
        if t.device.type != "cpu":
            raise Unsupported(f"input on {t.device}")
        shape = static_shape(t.shape)
        out = self.record[self.current]
        out_shape = static_shape(out.shape) if isinstance(out, torch.Tensor) else shape
        # (A mask Dynamo's graph left fake has no data to recognise.)
        if isinstance(key, Node) and t.dtype == torch.bool and data_free(key) and \
                not isinstance(t, FakeTensor):
            full = t.expand(out_shape).reshape(-1, out_shape[-1]) if len(out_shape) >= 2 else None
            expr = None if full is None else _causal(full, out_shape[-2])
            if expr is not None:
                return Cols([(out_shape[-1], expr)])
        if len(shape) == 0:
            kind = "scalar"
        elif all(d == 1 for d in shape[:-1]) and len(shape) < len(out_shape):
            kind = "columns"  # a parameter broadcast over the rows
        elif rows_of(shape) == self.rows and (len(shape) >= 2 or self.rows == 1):
            kind = "rows"
        elif len(out_shape) and rows_of(out_shape) == self.rows and \
                _broadcasts_to(shape, out_shape):
            kind = "broadcast"
        else:
            raise Unsupported(f"input of shape {list(shape)} is neither rows of {self.rows} "
                              "nor a column vector")
        if kind != "scalar" and not isinstance((shape or (1,))[-1], int):
            raise Unsupported(f"input of shape {[str(d) for d in shape]} has a symbolic last dim")
        cache_key = (key, kind, out_shape if kind == "broadcast" else None)
        if cache_key in self._keys:
            return self._keys[cache_key]
        name = f"in{len(self.inputs)}"
        n = shape[-1] if shape else 1
        is_bool = t.dtype == torch.bool
        # Loaded as stored: a bf16 or f16 tensor is read as it is (bools as 0/1 f32).
        dtype = storage_of(t.dtype)
        held = TORCH_DTYPE[dtype]
        if kind == "scalar":
            expr, prep = self.b.scalar(name, dtype=dtype), lambda v: v.to(held)
        elif kind == "columns":
            expr = self.b.columns(name, _lj.Dim(n), dtype=dtype)
            prep = (lambda v: v) if len(shape) == 1 else (lambda v: v.reshape(-1))
        elif kind == "rows":
            expr = self.b.rows(name, _lj.Dim(n), dtype=dtype)
            prep = _rows if len(shape) >= 2 else lambda v: v.reshape(1, -1)
        else:
            n = out_shape[-1]
            expr = self.b.rows(name, _lj.Dim(n), dtype=dtype)
            prep = lambda v: torch.empty(out_shape, dtype=held).copy_(v.expand(out_shape))
        if is_bool:
            base = prep
            prep = lambda v: base(v).to(torch.float32) if kind != "broadcast" else base(v)
            expr = _lj.ne(expr, 0.0)
        value = Uniform(expr) if kind == "scalar" else Cols([(n, expr)])
        self.inputs.append((key, getter, prep))
        self.input_kinds.append((kind, out_shape if kind == "broadcast" else None, is_bool))
        self.input_dtypes.append(dtype)
        self._keys[cache_key] = value
        return value

    # -- the whole subgraph ------------------------------------------------
    def lower_node(self, node):
        self.current = node
        out = self.record[node]
        if isinstance(out, torch.Tensor) and out.dtype not in STORAGE and out.dtype != torch.bool:
            raise Unsupported(f"result is {out.dtype}, not float32, bfloat16 or float16")
        if isinstance(out, torch.Tensor) and out.device.type != "cpu":
            raise Unsupported(f"result on {out.device} (lanejit runs on the CPU)")
        if isinstance(out, torch.Tensor) and out.dim() and \
                not isinstance(static_dim(out.shape[-1]), int):
            raise Unsupported("its last dim is symbolic (kernels are compiled for a column count)")
        value = lookup(node, self.modules)(self, node)
        if isinstance(out, torch.Tensor):
            if not isinstance(value, (Cols, Uniform)):
                raise Unsupported("result is not a row value")
            want = static_dim(out.shape[-1]) if out.dim() else 1
            if isinstance(value, Cols) and value.n != want:
                raise Unsupported(f"{value.n} columns where torch has {want}")
        self.env[node] = value
        return value

    def build(self, escaping):
        for node in self.nodes:
            self.lower_node(node)
        for node in escaping:
            value, out = self.env[node], self.record[node]
            if not isinstance(out, torch.Tensor):
                raise Unsupported("a tuple result is used outside the row program")
            name = f"out{len(self.outputs)}"
            is_bool = out.dtype == torch.bool
            dtype = storage_of(out.dtype)  # rounded once, where the kernel stores it
            as_float = (lambda e: _lj.select(e, 1.0, 0.0)) if is_bool else (lambda e: e)
            if isinstance(value, Uniform):
                # [..., 1] (keepdim) or [...] (one value per row) are fine
                shape = static_shape(out.shape)
                if shape and shape[-1] != 1 and math.prod(shape) != self.rows:
                    raise Unsupported(f"{node.name}, a per-row value broadcast over columns, "
                                      "is used outside the row program")
                self.b.write(name, _lj.Dim(0), as_float(value.expr), _lj.Dim(1), dtype=dtype)
            else:
                at = 0
                for n, e in elementwise(as_float, value).pieces:
                    self.b.write(name, _lj.Dim(at), e, _lj.Dim(value.n), dtype=dtype)
                    at += n
            self.outputs.append((node, static_shape(out.shape), is_bool))
            self.output_dtypes.append(dtype)
        if not self.outputs:
            raise Unsupported("no result is used")
        if not any(isinstance(k, Node) or k is None for k, _, _ in self.inputs) and not self.inputs:
            raise Unsupported("no tensor input")
        return self.b.build()
