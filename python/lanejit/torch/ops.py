"""How each supported torch operation becomes row-program expressions.

Every entry takes the lowering context (`lower.Lowering`) and the fx
node, and returns the node's value (`values`) or raises Unsupported
with the reason the node stays in torch. `lookup(node)` finds the entry for
call_function, call_method and call_module nodes alike, and for the ATen
operators of the graphs Dynamo's backends see after AOTAutograd (aten.mul,
aten.sum.dim_IntList, aten.slice, prims.fma, ...; _ATEN below).
"""

import operator

import torch
import torch.nn.functional as F
from torch.fx import Node

from .. import _lanejit as _lj
from .values import Cols, Uniform, Unsupported, concat, elementwise, reduce

_SQRT1_2 = 0.7071067811865476         # 1/sqrt(2), as torch's exact GELU
_SQRT_2_OVER_PI = 0.7978845608028654   # sqrt(2/pi), as torch's tanh GELU


def _args(node, names, defaults=None):
    """The node's arguments by name (positional or keyword), raw fx values."""
    defaults = defaults or {}
    out = dict(defaults)
    for name, value in zip(names, node.args):
        out[name] = value
    for name, value in node.kwargs.items():
        if name not in names:
            raise Unsupported(f"argument {name}= is not supported")
        out[name] = value
    missing = [n for n in names if n not in out]
    if missing:
        raise Unsupported("missing argument " + missing[0])
    return out


def _last_dim(lw, node, dim, tensor_arg):
    ndim = len(lw.shape_of(tensor_arg))
    d = lw.const(dim)
    if isinstance(d, (list, tuple)) and len(d) == 1:
        d = d[0]
    if d not in (-1, ndim - 1):
        raise Unsupported(f"reduces over dim {d}, not the last dim (row programs reduce rows)")


def _no_dtype(lw, dtype):
    # A float dtype= (a bf16 sum accumulated as float32, say) changes only
    # the result's storage, which the node's own dtype gives: the kernel
    # computes in f32 either way.
    if lw.const(dtype) not in (None, torch.float32, torch.bfloat16, torch.float16):
        raise Unsupported(f"dtype={lw.const(dtype)}")


def _binary(fn):
    def lower(lw, node):
        a = _args(node, ["input", "other"], {"alpha": 1})
        if lw.const(a["alpha"]) != 1:
            raise Unsupported("alpha != 1")
        return elementwise(fn, lw.val(a["input"]), lw.val(a["other"]))
    return lower


def _unary(fn):
    def lower(lw, node):
        return elementwise(fn, lw.val(node.args[0]))
    return lower


def _div(lw, node):
    a = _args(node, ["input", "other"], {"rounding_mode": None})
    if lw.const(a["rounding_mode"]) is not None:
        raise Unsupported("division with rounding_mode")
    return elementwise(lambda x, y: x / y, lw.val(a["input"]), lw.val(a["other"]))


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + _lj.tanh(inner))
    if approximate == "none":
        return x * 0.5 * (1.0 + _lj.erf(x * _SQRT1_2))
    raise Unsupported(f"gelu approximate={approximate!r}")


def _gelu_op(lw, node):
    a = _args(node, ["input", "approximate"], {"approximate": "none"})
    approx = lw.const(a["approximate"])
    return elementwise(lambda x: _gelu(x, approx), lw.val(a["input"]))


def _pow(lw, node):
    a = _args(node, ["input", "exponent"])
    k = lw.const(a["exponent"])
    table = {1: lambda x: x, 2: lambda x: x * x, 3: lambda x: x * x * x,
             0.5: _lj.sqrt, -0.5: _lj.rsqrt, -1: lambda x: 1.0 / x}
    if not isinstance(k, (int, float)) or k not in table:
        raise Unsupported(f"pow with exponent {k!r} (supported: 2, 3, 0.5, -0.5, -1)")
    return elementwise(table[k], lw.val(a["input"]))


def _clamp(lw, node, lo=None, hi=None):
    a = _args(node, ["input", "min", "max"], {"min": lo, "max": hi})
    v = lw.val(a["input"])
    if a["min"] is not None:
        v = elementwise(_lj.maximum, v, lw.val(a["min"]))
    if a["max"] is not None:
        v = elementwise(_lj.minimum, v, lw.val(a["max"]))
    return v


def _where(lw, node):
    a = _args(node, ["condition", "input", "other"])
    m, x, y = lw.val(a["condition"]), lw.val(a["input"]), lw.val(a["other"])
    if _is_neg_inf(y):
        _neg_inf_fills(lw)[node] = (m, x, False)
    elif _is_neg_inf(x):
        _neg_inf_fills(lw)[node] = (m, y, True)
    return elementwise(_lj.select, m, x, y)


def _masked_fill(lw, node):
    a = _args(node, ["input", "mask", "value"])
    x, m, v = lw.val(a["input"]), lw.val(a["mask"]), lw.val(a["value"])
    if _is_neg_inf(v):
        _neg_inf_fills(lw)[node] = (m, x, True)
    return elementwise(lambda x, m, v: _lj.select(m, v, x), x, m, v)


# Softmax after filling with -inf (an attention mask): exp(-inf - max) is
# +0, but a vector exp spends most of its time on arguments that underflow
# (denormal assists), so the filled lanes are selected to +0 after an exp
# of the unfilled value instead. Same bits: a filled lane is +0 either way
# when the row maximum is finite or +inf; when it is -inf or NaN every
# result of the row is NaN both ways.
def _neg_inf_fills(lw):
    """node -> (mask, unfilled value, True when the mask marks the filled lanes)."""
    if not hasattr(lw, "neg_inf_fills"):
        lw.neg_inf_fills = {}
    return lw.neg_inf_fills


def _is_neg_inf(v):
    return isinstance(v, float) and v == float("-inf")


def _exp_shifted(lw, source, x, mx):
    """exp(x - mx) lane by lane, x the value of fx node `source`."""
    fill = _neg_inf_fills(lw).get(source)
    if fill is None:
        return elementwise(_lj.exp, elementwise(lambda p, m: p - m, x, mx))
    mask, unfilled, filled_when_true = fill
    e = elementwise(_lj.exp, elementwise(lambda p, m: p - m, unfilled, mx))
    if filled_when_true:
        return elementwise(lambda m, p: _lj.select(m, 0.0, p), mask, e)
    return elementwise(lambda m, p: _lj.select(m, p, 0.0), mask, e)


def _reduction(kind):
    def lower(lw, node):
        a = _args(node, ["input", "dim", "keepdim", "dtype"], {"keepdim": False, "dtype": None})
        _no_dtype(lw, a["dtype"])
        if a["dim"] is None:
            raise Unsupported("reduction over all dims")
        _last_dim(lw, node, a["dim"], a["input"])
        return reduce(kind, lw.val(a["input"]))
    return lower


def _max_min(kind):
    binary = _lj.maximum if kind == "max" else _lj.minimum

    def lower(lw, node):
        if len(node.args) >= 2 and lw.is_tensor(node.args[1]):
            return elementwise(binary, lw.val(node.args[0]), lw.val(node.args[1]))
        a = _args(node, ["input", "dim", "keepdim"], {"keepdim": False})
        _last_dim(lw, node, a["dim"], a["input"])
        if any(u.target != operator.getitem or u.args[1] != 0 for u in node.users):
            raise Unsupported(f"{kind}(dim) indices are used (only the values are a row program)")
        return (reduce(kind, lw.val(a["input"])),)
    return lower


def _var(lw, node):
    a = _args(node, ["input", "dim", "unbiased", "keepdim", "correction"],
              {"unbiased": True, "keepdim": False, "correction": None})
    if a["dim"] is None:
        raise Unsupported("var over all dims")
    _last_dim(lw, node, a["dim"], a["input"])
    x = lw.val(a["input"])
    correction = lw.const(a["correction"])
    if correction is None:
        correction = 1 if lw.const(a["unbiased"]) else 0
    n = x.n - correction
    d = elementwise(lambda p, m: p - m, x, reduce("mean", x))
    return Uniform(reduce("sum", elementwise(lambda p: p * p, d)).expr / float(n))


def _softmax_input(lw, node):
    a = _args(node, ["input", "dim", "_stacklevel", "dtype"], {"_stacklevel": 3, "dtype": None})
    _no_dtype(lw, a["dtype"])
    _last_dim(lw, node, a["dim"], a["input"])
    return a["input"]


def _softmax_of(lw, source):
    x = lw.val(source)
    e = _exp_shifted(lw, source, x, reduce("max", x))
    return elementwise(lambda p, s: p / s, e, reduce("sum", e))


def _softmax(lw, node):
    return _softmax_of(lw, _softmax_input(lw, node))


def _log_softmax_of(lw, source):
    x = lw.val(source)
    mx = reduce("max", x)
    z = elementwise(lambda p, m: p - m, x, mx)
    lse = _lj.log(reduce("sum", _exp_shifted(lw, source, x, mx)).expr)
    return elementwise(lambda p, s: p - s, z, Uniform(lse))


def _log_softmax(lw, node):
    return _log_softmax_of(lw, _softmax_input(lw, node))


def _layer_norm_value(x, eps, weight, bias):
    d = elementwise(lambda p, m: p - m, x, reduce("mean", x))
    var = reduce("mean", elementwise(lambda p: p * p, d))
    y = elementwise(lambda p, r: p * r, d, Uniform(_lj.rsqrt(var.expr + float(eps))))
    if weight is not None:
        y = elementwise(lambda p, w: p * w, y, weight)
    if bias is not None:
        y = elementwise(lambda p, b: p + b, y, bias)
    return y


def _normalized_last(lw, shape, x_arg):
    shape = lw.const(shape)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(shape) != 1 or shape[0] != lw.shape_of(x_arg)[-1]:
        raise Unsupported(f"layer_norm over {shape}, not the last dim alone")


def _layer_norm(lw, node):
    a = _args(node, ["input", "normalized_shape", "weight", "bias", "eps"],
              {"weight": None, "bias": None, "eps": 1e-5})
    _normalized_last(lw, a["normalized_shape"], a["input"])
    w = None if a["weight"] is None else lw.val(a["weight"])
    b = None if a["bias"] is None else lw.val(a["bias"])
    return _layer_norm_value(lw.val(a["input"]), lw.const(a["eps"]), w, b)


def _module_layer_norm(lw, node, m):
    if len(m.normalized_shape) != 1:
        raise Unsupported("LayerNorm over more than the last dim")
    w = lw.param(node, m.weight) if m.weight is not None else None
    b = lw.param(node, m.bias) if m.bias is not None else None
    return _layer_norm_value(lw.val(node.args[0]), m.eps, w, b)


def _getitem(lw, node):
    base, index = node.args
    if isinstance(lw.val_or_none(base), tuple):
        return lw.val(base)[index]
    x = lw.val(base)
    index = lw.const(index)
    index = index if isinstance(index, tuple) else (index,)
    ndim = len(lw.shape_of(base))
    if index and index[0] is Ellipsis:
        index = (slice(None),) * (ndim - len(index) + 1) + index[1:]
    if len(index) != ndim or any(s != slice(None) for s in index[:-1]):
        raise Unsupported(f"indexing {index} (only slices of the last dim)")
    last = index[-1]
    if not isinstance(last, slice) or last.step not in (None, 1) or not isinstance(x, Cols):
        raise Unsupported(f"indexing the last dim with {last!r}")
    begin, end, _ = last.indices(x.n)
    return x.part(begin, max(begin, end))


def _cuts(n, sizes):
    out, at = [], 0
    for s in sizes:
        out.append((at, min(n, at + s)))
        at += s
    return out


def _chunk(lw, node):
    a = _args(node, ["input", "chunks", "dim"], {"dim": 0})
    _last_dim(lw, node, a["dim"], a["input"])
    x = lw.val(a["input"])
    k = lw.const(a["chunks"])
    size = -(-x.n // k)
    return tuple(x.part(b, e) for b, e in _cuts(x.n, [size] * k) if b < e)


def _split(lw, node):
    a = _args(node, ["input", "split_size_or_sections", "dim"], {"dim": 0})
    _last_dim(lw, node, a["dim"], a["input"])
    x = lw.val(a["input"])
    s = lw.const(a["split_size_or_sections"])
    sizes = [s] * (-(-x.n // s)) if isinstance(s, int) else list(s)
    return tuple(x.part(b, e) for b, e in _cuts(x.n, sizes))


def _cat(lw, node):
    a = _args(node, ["tensors", "dim"], {"dim": 0})
    _last_dim(lw, node, a["dim"], a["tensors"][0])
    return concat([lw.val(t) for t in a["tensors"]])


def _identity(lw, node):
    # .float(), .to(float32), .contiguous(), .view/.reshape that keep the last
    # dim: the checks on dtypes and shapes happen in Lowering.lower_node. A
    # cast between float types is free too: values inside a kernel are f32,
    # and only an output's store rounds (Lowering.build).
    src = node.args[0]
    if lw.shape_of(src)[-1:] != lw.shape_of(node)[-1:]:
        raise Unsupported("reshape that changes the last dim")
    from_bool, to_bool = _is_bool(lw, src), _is_bool(lw, node)
    if from_bool and not to_bool:  # mask.float(): 1 and 0
        return elementwise(lambda m: _lj.select(m, 1.0, 0.0), lw.val(src))
    if to_bool and not from_bool:  # x.bool(): nonzero
        return elementwise(lambda x: _lj.ne(x, 0.0), lw.val(src))
    return lw.val(src)


def _is_bool(lw, arg):
    v = lw.record.get(arg) if isinstance(arg, Node) else None
    return isinstance(v, torch.Tensor) and v.dtype == torch.bool


_E = elementwise
_FUNCTIONS = {
    operator.add: _binary(lambda a, b: a + b), operator.sub: _binary(lambda a, b: a - b),
    operator.mul: _binary(lambda a, b: a * b), operator.truediv: _div,
    operator.neg: _unary(lambda a: -a), operator.pow: _pow, operator.getitem: _getitem,
    operator.lt: _binary(lambda a, b: a < b), operator.le: _binary(lambda a, b: a <= b),
    operator.gt: _binary(lambda a, b: a > b), operator.ge: _binary(lambda a, b: a >= b),
    operator.eq: _binary(_lj.eq), operator.ne: _binary(_lj.ne),
    operator.and_: _binary(lambda a, b: a & b), operator.or_: _binary(lambda a, b: a | b),
    operator.invert: _unary(_lj.logical_not),
}
_NAMED = {  # torch.X, Tensor.X and F.X share these names
    "add": _binary(lambda a, b: a + b), "sub": _binary(lambda a, b: a - b),
    "mul": _binary(lambda a, b: a * b), "div": _div, "true_divide": _div,
    "neg": _unary(lambda a: -a), "abs": _unary(_lj.abs), "exp": _unary(_lj.exp),
    "log": _unary(_lj.log), "sqrt": _unary(_lj.sqrt), "rsqrt": _unary(_lj.rsqrt),
    "tanh": _unary(_lj.tanh), "sigmoid": _unary(_lj.sigmoid), "erf": _unary(lambda x: _lj.erf(x)),
    "relu": _unary(lambda x: _lj.maximum(x, 0.0)), "square": _unary(lambda x: x * x),
    "silu": _unary(lambda x: x * _lj.sigmoid(x)), "gelu": _gelu_op, "pow": _pow,
    "clamp": _clamp, "clip": _clamp,
    "clamp_min": lambda lw, n: _clamp(lw, n) if len(n.args) < 2 else
    _E(_lj.maximum, lw.val(n.args[0]), lw.val(n.args[1])),
    "clamp_max": lambda lw, n: _E(_lj.minimum, lw.val(n.args[0]), lw.val(n.args[1])),
    "minimum": _binary(_lj.minimum), "maximum": _binary(_lj.maximum),
    "max": _max_min("max"), "min": _max_min("min"),
    "amax": _reduction("max"), "amin": _reduction("min"), "sum": _reduction("sum"),
    "mean": _reduction("mean"), "var": _var, "softmax": _softmax, "log_softmax": _log_softmax,
    "layer_norm": _layer_norm, "where": _where, "masked_fill": _masked_fill, "cat": _cat,
    "concat": _cat, "chunk": _chunk, "split": _split,
    "lt": _binary(lambda a, b: a < b), "le": _binary(lambda a, b: a <= b),
    "gt": _binary(lambda a, b: a > b), "ge": _binary(lambda a, b: a >= b),
    "eq": _binary(_lj.eq), "ne": _binary(_lj.ne),
    "float": _identity, "to": _identity, "type_as": _identity, "contiguous": _identity,
    "bfloat16": _identity, "half": _identity,
    "view": _identity, "reshape": _identity,
}
_MODULES = {
    torch.nn.LayerNorm: _module_layer_norm,
    torch.nn.ReLU: lambda lw, n, m: _NAMED["relu"](lw, n),
    torch.nn.SiLU: lambda lw, n, m: _NAMED["silu"](lw, n),
    torch.nn.Sigmoid: lambda lw, n, m: _NAMED["sigmoid"](lw, n),
    torch.nn.Tanh: lambda lw, n, m: _NAMED["tanh"](lw, n),
    torch.nn.GELU: lambda lw, n, m: _E(lambda x: _gelu(x, m.approximate), lw.val(n.args[0])),
    torch.nn.Identity: lambda lw, n, m: lw.val(n.args[0]),
    torch.nn.Softmax: lambda lw, n, m: _module_softmax(lw, n, m),
}


def _module_softmax(lw, node, m):
    if m.dim not in (-1, len(lw.shape_of(node.args[0])) - 1):
        raise Unsupported(f"Softmax(dim={m.dim}), not the last dim")
    return _softmax_of(lw, node.args[0])


def _aten_slice(lw, node):
    a = _args(node, ["input", "dim", "start", "end", "step"],
              {"dim": 0, "start": None, "end": None, "step": 1})
    _last_dim(lw, node, a["dim"], a["input"])
    x = lw.val(a["input"])
    step = lw.const(a["step"])
    if step != 1 or not isinstance(x, Cols):
        raise Unsupported(f"slice with step {step}")
    begin, end, _ = slice(lw.const(a["start"]), lw.const(a["end"])).indices(x.n)
    return x.part(begin, max(begin, end))


def _aten_softmax(log):
    def lower(lw, node):
        # half_to_float (an f16 input, an f32 result) changes only the
        # result's storage, which the node's dtype gives.
        a = _args(node, ["input", "dim", "half_to_float"])
        _last_dim(lw, node, a["dim"], a["input"])
        return (_log_softmax_of if log else _softmax_of)(lw, a["input"])
    return lower


def _aten_logical(fn):
    def lower(lw, node):
        a, b = lw.val(node.args[0]), lw.val(node.args[1])
        if isinstance(a, bool) or isinstance(b, bool):
            # x & True and x | False are x (a mask broadcast with a full one)
            const, other = (a, b) if isinstance(a, bool) else (b, a)
            if const != (fn is operator.and_):
                raise Unsupported("a logical operation with a constant result")
            return other
        return elementwise(fn, a, b)
    return lower


def _aten_expand(lw, node):
    """expand: a view when the last dim stays; a [..., 1] value broadcast
    over the columns is a per-row value (the gradient of a mean)."""
    src = node.args[0]
    before, after = lw.shape_of(src)[-1:], lw.shape_of(node)[-1:]
    if before == after:
        return lw.val(src)
    if before in ((), (1,)):
        v = lw.val(src)
        if isinstance(v, Cols) and v.n == 1:
            return Uniform(_lj.rowmax(v.pieces[0][1]))
        if isinstance(v, Uniform):
            return v
    raise Unsupported(f"expand of the last dim from {list(before)} to {list(after)}")


# ATen operator packets (and prims) with a lowering of their own; others
# share _NAMED's entry by name (aten.mul, aten.exp, aten.mean, ...).
_ATEN = {
    "slice": _aten_slice, "split_with_sizes": _split,
    "_softmax": _aten_softmax(False), "_log_softmax": _aten_softmax(True),
    "fma": lambda lw, n: _E(_lj.fma, *[lw.val(a) for a in n.args[:3]]),
    "logical_and": _aten_logical(operator.and_), "logical_or": _aten_logical(operator.or_),
    "logical_not": _unary(_lj.logical_not),
    "reciprocal": _unary(lambda x: 1.0 / x),
    "_unsafe_view": _identity, "clone": _identity, "alias": _identity, "expand": _aten_expand,
    "unsqueeze": _identity, "squeeze": _identity, "convert_element_type": _identity,
    "_to_copy": _identity,
}
# Arguments these take that change nothing a row program computes.
_ATEN_IGNORED_KWARGS = {"memory_format", "dtype", "layout", "device", "pin_memory",
                        "non_blocking"}


def op_name(node):
    """The operator's name: aten.mul.Tensor -> "mul", torch.exp -> "exp",
    a method "view" -> "view" (for the partitioner's data-mover test)."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return target.overloadpacket.__name__
    return getattr(target, "__name__", target)


def _aten_lookup(node):
    name = op_name(node)
    fn = _ATEN.get(name) or _NAMED.get(name)
    if fn is None:
        raise Unsupported(f"{node.target} is not a row operation")
    if name in ("_unsafe_view", "clone", "alias", "unsqueeze", "squeeze",
                "convert_element_type", "_to_copy", "view", "reshape"):
        extra = set(node.kwargs) - _ATEN_IGNORED_KWARGS
        if extra:
            raise Unsupported(f"{node.target} with {sorted(extra)[0]}=")
        return lambda lw, n: _identity(lw, n)
    return fn


def _function_name(target):
    for space in (torch, F, torch.Tensor, torch.special):
        name = getattr(target, "__name__", None)
        if name and getattr(space, name, None) is target:
            return name
    return None


def lookup(node, modules):
    """The lowering for `node`, or raises Unsupported naming the op."""
    if node.op == "call_function":
        if node.target in _FUNCTIONS:
            return _FUNCTIONS[node.target]
        if isinstance(node.target, torch._ops.OpOverload):
            return _aten_lookup(node)
        name = _function_name(node.target)
        if name in _NAMED:
            return _NAMED[name]
        raise Unsupported(f"{getattr(node.target, '__name__', node.target)} is not a row operation")
    if node.op == "call_method":
        if node.target in _NAMED:
            return _NAMED[node.target]
        raise Unsupported(f"Tensor.{node.target} is not a row operation")
    if node.op == "call_module":
        m = modules[node.target]
        fn = _MODULES.get(type(m))
        if fn is None:
            raise Unsupported(f"module {type(m).__name__} is not a row operation")
        return lambda lw, n: fn(lw, n, m)
    raise Unsupported(f"{node.op} node")
