"""The compiled callable: guards, a cache of specializations, fallback and
the self-check.

A call looks up its specialization by a key of every argument (tensor
shape, dtype, device and contiguity; other values by value), so a new
column count C (or a new row count) builds and caches a new one. A
specialization records the graph's values once, partitions it, lowers each
group and compiles it with lanejit (whose own cache makes a program seen
before cheap). Whatever cannot run as a kernel stays torch; calls that can
use no kernel at all (inputs requiring grad while grad mode is on, CUDA
tensors, an untraceable function) run the original code, and the reason is
kept for explain().

In front of all that sit two caches of what a call runs. _lanejit.FastCalls
(the C base class; its call slot is the callable's __call__) holds entries
for calls whose arguments are plain float32, bfloat16, float16 or int8 CPU
tensors, keyed by exact dtypes, sizes and strides, and runs the kernel
(when direct applies) or the specialization's forward without Python code;
it holds none for calls under CPU autocast, which takes the path below.
Any other call, and every miss, runs _call: a dict keyed by grad mode, CPU
autocast and, per argument, shape, dtype, is_cpu, is_contiguous() and (in
grad mode) requires_grad maps a key
seen before to what its call runs, so a repeated call costs one tuple, one
dict lookup and the call. Calls with keyword or non-tensor arguments,
check mode, fallbacks, and grad mode on a module with parameters (whose
requires_grad may change between calls) take the full path every time.
Both caches are filled only after a call ran the full path.
"""

import inspect

import torch
import torch.fx

from .. import _lanejit as _lj
from .direct import direct_call
from .lower import Lowering
from .partition import drop_data_movers, mask_edge, partition, probe, record_values
from .rewrite import kernel_call, rewrite

TOLERANCE = 5e-5
# check=True on bf16 and f16 results: eager rounds every op's result to the
# type, a kernel only its outputs; four units in the last place at 1.
TOLERANCES = {torch.bfloat16: 4 * 2.0 ** -7, torch.float16: 4 * 2.0 ** -10}
_Tensor = torch.Tensor
_grad_enabled = torch.is_grad_enabled


def _autocast():
    """CPU autocast's dtype while it is on, else None: part of every key,
    since it changes the dtypes the traced graph's torch ops give, and so
    the storage types of the kernels between them."""
    return torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else None


class CheckError(AssertionError):
    """check=True found a result that differs from eager torch."""


class Group:
    """One captured subgraph: its nodes, program, kernel, inputs, outputs."""

    def __init__(self, nodes, lowering, program, kernel):
        self.nodes, self.lowering, self.program, self.kernel = nodes, lowering, program, kernel


class Specialization:
    def __init__(self, gm, args, options):
        record, self.first_result = record_values(gm, args)
        self.reasons, rows = probe(gm, record)
        modules = dict(gm.named_modules())
        self.groups, calls = [], []
        for nodes in drop_data_movers(partition(gm, rows, record), self.reasons, modules):
            members = set(nodes)
            escaping = [n for n in nodes
                        if any(u not in members and not mask_edge(u, record) for u in n.users)]
            name = f"{_name(gm)}_{len(self.groups)}"
            try:
                lw = Lowering(name, nodes, record, modules, rows[nodes[0]])
                program = lw.build(escaping)
                kernel = _lj.compile(program, **options)
            except Exception as e:  # Unsupported or a lanejit error: the group stays torch
                for n in nodes:
                    self.reasons[n] = f"its subgraph does not lower: {e}"
                continue
            call = kernel_call(kernel, lw.inputs, lw.outputs, len(self.groups))
            sources = [src if isinstance(src, torch.fx.Node) else None for src, _, _ in lw.inputs]
            calls.append((call, sources, [n for n, _, _ in lw.outputs]))
            self.groups.append(Group(nodes, lw, program, kernel))
        self.module = gm
        self.forward = gm.forward
        if self.groups:
            try:
                self.module = rewrite(gm, [g.nodes for g in self.groups], calls)
                self.forward = self.module.forward  # no nn.Module hooks to run
            except RuntimeError as e:
                for g in self.groups:
                    for n in g.nodes:
                        self.reasons[n] = str(e)
                self.groups = []
        kept = {n.name for n in self.module.graph.nodes}
        for n in gm.graph.nodes:
            if n in self.reasons and n.name not in kept:
                self.reasons[n] = ("not needed: the kernel computes this mask from row/column "
                                   "indices" if mask_edge(n, record) else "not needed any more")
        self.torch_nodes = [n for n in gm.graph.nodes if n in self.reasons]


def _name(gm):
    return getattr(gm, "_lanejit_name", "graph")


def _key(args):
    key = [_autocast()]
    for a in args:
        if isinstance(a, torch.Tensor):
            key.append((a.shape, a.dtype, a.is_contiguous()))  # CPU: checked before
        elif isinstance(a, (int, float, bool, str, type(None))):
            key.append((type(a), a))
        else:
            return None
    return tuple(key)


def _compare(got, want, path="output", autocast=None):
    """Raises CheckError where got differs from eager's want: beyond
    TOLERANCE, or TOLERANCES of a bf16 or f16 result, or of the autocast
    dtype (whose roundings an f32 result went through in eager)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise CheckError(f"lanejit.torch check: {path} has shape "
                             f"{getattr(got, 'shape', type(got))}, eager {tuple(want.shape)}")
        if want.dtype == torch.bool or not want.is_floating_point():
            if not torch.equal(got, want):
                raise CheckError(f"lanejit.torch check: {path} differs from eager")
            return
        if got.dtype != want.dtype:
            raise CheckError(f"lanejit.torch check: {path} is {got.dtype}, eager {want.dtype}")
        tol = TOLERANCES.get(want.dtype, TOLERANCES.get(autocast, TOLERANCE))
        if want.dtype in TOLERANCES:  # compared in float64, not in the type itself
            got, want = got.double(), want.double()
        if not torch.allclose(got, want, atol=tol, rtol=tol, equal_nan=True):
            err = (got.double() - want.double()).abs()
            bad = (err > tol + tol * want.double().abs()).sum().item()
            raise CheckError(f"lanejit.torch check: {path}: {bad} elements differ from eager by "
                             f"more than atol=rtol={tol:.3g} (max abs error "
                             f"{err.nan_to_num(float('inf')).max().item():.3g})")
        return
    if isinstance(want, (tuple, list)):
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]", autocast)
        return
    if isinstance(want, dict):
        for k in want:
            _compare(got[k], want[k], f"{path}[{k!r}]", autocast)


class Compiled(_lj.FastCalls):
    """What lanejit.torch.compile returns; call it like the original.

    Calling it runs _lj.FastCalls's C call (no __call__ here): a call whose
    arguments match an entry registered below runs that entry's kernel (or
    forward) without Python code; any other call runs _call."""

    def __init__(self, fn, check=False, **options):
        self.original = fn
        self.check = bool(check)
        self.options = options
        self.cache = {}
        self._fast = {}           # fast key -> ((spec, None), function of the arguments)
        self.last = None          # (specialization or None, fallback reason)
        self._params = list(fn.parameters()) + list(fn.buffers()) \
            if isinstance(fn, torch.nn.Module) else []
        try:
            self.graph_module = torch.fx.symbolic_trace(fn)
            self.graph_module._lanejit_name = _safe_name(fn)
            self.trace_error = _in_place(self.graph_module)
            self.signature = inspect.signature(self.graph_module.forward)
        except Exception as e:  # data-dependent control flow and the like
            self.graph_module = None
            self.signature = None
            self.trace_error = f"torch.fx.symbolic_trace failed: {type(e).__name__}: {e}"

    def fallback_reason(self, args, kwargs):
        if self.trace_error:
            return self.trace_error
        if kwargs:
            return "keyword arguments (pass tensors positionally)"
        if torch.is_grad_enabled():
            for t in list(args) + self._params:
                if isinstance(t, torch.Tensor) and t.requires_grad:
                    return ("an input or parameter requires grad while grad mode is on "
                            "(lanejit kernels have no backward yet)")
        for a in args:
            if isinstance(a, torch.Tensor) and not a.is_cpu:
                return f"a tensor on {a.device} (lanejit runs on the CPU)"
        return None

    def specialization(self, args, kwargs=None):
        reason = self.fallback_reason(args, kwargs or {})
        if reason:
            return None, reason
        key = _key(args)
        if key is None:
            return None, "an argument that is not a tensor or a number"
        spec = self.cache.get(key)
        if spec is None:
            # The original's TypeError for a wrong argument count (fx's
            # interpreter would ignore extra arguments).
            self.signature.bind(*args)
            spec = Specialization(self.graph_module, args, self.options)
            self.cache[key] = spec
        return spec, None

    def _call(self, *args, **kwargs):
        """The full path (FastCalls calls it when no entry matched)."""
        # The fast guard, inlined: every attribute read here is ~35-60 ns.
        key = None
        grad = _grad_enabled()
        if not (kwargs or self.check or (grad and self._params)):
            key = (grad, _autocast())
            for a in args:
                if type(a) is not _Tensor and not isinstance(a, _Tensor):
                    key = None
                    break
                # requires_grad only matters under grad mode (short-circuit)
                key += (a.shape, a.dtype, a.is_cpu, a.is_contiguous(), grad and a.requires_grad)
            if key is not None:
                hit = self._fast.get(key)
                if hit is not None:
                    self.last = hit[0]
                    return hit[1](*args)
        spec, reason = self.specialization(args, kwargs)
        self.last = (spec, reason)
        if spec is None:
            return self.original(*args, **kwargs)
        if spec.first_result is not None and not self.check:
            # The specialization just ran the graph (eagerly) to see its
            # values: that run is this call's result, not one to repeat.
            out, spec.first_result = spec.first_result, None
            return out
        if key is not None:
            direct = direct_call(spec, args)
            if direct is not None:
                self._fast[key] = (self.last, direct[0])
                kernel, sources, pick = direct[2]
                if key[1] is None:
                    _register(self, args, kernel=kernel, sources=sources, pick=pick)
                return direct[1]
            self._fast[key] = (self.last, spec.forward)
            if key[1] is None:
                _register(self, args, forward=spec.forward)
        out = spec.forward(*args)
        if self.check:
            _compare(out, self.original(*args), autocast=_autocast())
        return out


def _register(compiled, args, **target):
    """Adds the C entry for this call (only plain float32, bfloat16, float16
    or int8 CPU tensors that need no grad, outside autocast, get one; the C
    guard re-checks that on every call)."""
    try:
        _lj._fast_register(compiled, args, compiled.last, **target)
    except (TypeError, ValueError):
        pass  # bound as the plain kernel call binds: not registered, the dict serves


def _in_place(gm):
    """Why a graph that mutates tensors cannot be reordered around kernels,
    or None. (Kernels run where their inputs are ready; a mutation between
    two reads has no edge in the graph to keep that order.)"""
    for n in gm.graph.nodes:
        name = getattr(n.target, "__name__", n.target) if n.op != "call_module" else ""
        if n.op == "call_function" and getattr(n.target, "__module__", "") in ("_operator",
                                                                                "operator"):
            name = ""  # operator.and_ / or_ are not in-place
        inplace = n.kwargs.get("inplace") is True or (
            n.op == "call_module" and getattr(gm.get_submodule(n.target), "inplace", False))
        if inplace or (isinstance(name, str) and name.endswith("_") and not name.endswith("__")):
            return f"in-place operation {n.name} ({name or n.target}): mutations are not captured"
    return None


def _safe_name(fn):
    name = type(fn).__name__ if isinstance(fn, torch.nn.Module) else getattr(fn, "__name__", "fn")
    return "".join(c if c.isalnum() else "_" for c in name).lower() or "graph"
