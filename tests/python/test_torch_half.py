# bf16 and f16 models through lanejit.torch (docs/torch.md, "bf16, fp16 and
# autocast"): kernels load bf16/f16 storage and round once at their outputs,
# casts inside a fused region are no kernels of their own, and the results
# match eager in the type's tolerance; the same for trace() and autocast.
import contextlib
import copy
import os
import tempfile

import pytest

torch = pytest.importorskip("torch")

import lanejit.torch as ljt  # noqa: E402
from lanejit import _lanejit as _lj  # noqa: E402
from lanejit import dynamo  # noqa: E402
from lanejit.torch.compiled import TOLERANCES  # noqa: E402
from torch_models import DecoderBlock, rope, seed_cases  # noqa: E402

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(
    os.environ.get("LANEJIT_BUILD_DIR") or tempfile.gettempdir(), "torchinductor-cache"))

STORAGE = {torch.bfloat16: "bf16", torch.float16: "f16"}
FRACTION = {torch.bfloat16: 7, torch.float16: 10}


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield


def close(got, want, dtype):
    """Within the type's tolerance (four units in the last place at 1, as
    check=True allows): eager rounds every op, a kernel only its outputs."""
    tol = TOLERANCES[dtype]
    got, want = got.double(), want.double()
    return bool(((got - want).abs() <= tol + tol * want.abs()).all())


def half_ulp(values, dtype):
    e = torch.floor(torch.log2(values.abs().clamp_min(2.0 ** -14)))
    return 2.0 ** (e - FRACTION[dtype] - 1)


def compile_recorded(model, **options):
    sink = []

    def backend(gm, example_inputs):
        return dynamo.backend(gm, example_inputs, options=options, _sink=sink)
    return torch.compile(model, backend=backend), sink


def block_inputs(t, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(1, t, 64, generator=g), torch.randn(t, 16, generator=g), \
        torch.randn(t, 16, generator=g)
    return tuple(a.to(dtype) for a in xs)


@pytest.mark.parametrize("dtype,seq,rest", [(torch.bfloat16, 9, "inductor"),
                                            (torch.bfloat16, 1, "eager"),
                                            (torch.float16, 9, "eager")])
def test_decoder_block_matches_eager(dtype, seq, rest):
    torch.manual_seed(0)
    block = DecoderBlock().eval().to(dtype)
    compiled, sink = compile_recorded(block, rest=rest)
    args = block_inputs(seq, dtype)
    with torch.no_grad():
        got, want = compiled(*args), block(*args)
        exact = copy.deepcopy(block).double()(*(a.double() for a in args))
    assert got.dtype == dtype
    assert close(got, want, dtype)
    assert close(got, exact, dtype)  # as near the float64 result as eager is
    assert all(r.error is None for r in sink), [r.error for r in sink]
    groups = [g for r in sink for g in r.groups]
    assert len(groups) >= 5, len(groups)
    # The kernels read and write the model's type: no cast left as a node of its own.
    name = STORAGE[dtype]
    assert all(set(g["output_dtypes"]) == {name} for g in groups), groups
    assert sum(d == name for g in groups for d in g["input_dtypes"]) > len(groups)
    casts = [n for r in sink for n, (op, _) in r.torch_nodes.items()
             if "convert_element_type" in op]
    assert not casts or seq == 1, casts  # at seq 1 one cast only moves data (a view's)


def test_casts_inside_a_region_are_loads_and_stores():
    # Hugging Face's LlamaRMSNorm: float32 inside, the input's dtype out.
    class LlamaRMSNorm(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(c))

        def forward(self, x):
            dtype = x.dtype
            h = x.to(torch.float32)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
            return self.weight * h.to(dtype)

    torch.manual_seed(1)
    norm = LlamaRMSNorm(256).to(torch.bfloat16).eval()
    x = torch.randn(4, 7, 256).to(torch.bfloat16)
    compiled, sink = compile_recorded(norm, rest="eager")
    with torch.no_grad():
        got, want = compiled(x), norm(x)
    assert got.dtype == torch.bfloat16 and close(got, want, torch.bfloat16)
    (group,) = sink[0].groups
    ops = [op for _, op in group["nodes"]]
    assert sum("convert_element_type" in op for op in ops) == 2, ops
    assert group["input_dtypes"] == ["bf16", "bf16"] and group["output_dtypes"] == ["bf16"]
    assert "in in0: bf16[R, 256]" in group["program"]
    assert "out out0: bf16[R, 256]" in group["program"]
    assert not sink[0].torch_nodes, sink[0].torch_nodes
    # Rounded once: within half a unit in the last place of the float64
    # value (eager rounds twice, at h.to(dtype) and after the multiply).
    xd, wd = x.double(), norm.weight.double()
    exact = wd * (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6))
    err = (got.double() - exact).abs()
    assert bool((err <= half_ulp(exact, torch.bfloat16) + 1e-5 * exact.abs()).all())


def test_explain_shows_the_types():
    def f(x, w):
        return torch.nn.functional.silu(x) * w
    x, w = torch.randn(3, 32).to(torch.float16), torch.randn(32)
    text = str(ljt.explain(ljt.compile(f, rest="eager"), x, w))
    assert "in in0: f16[R, 32]" in text and "in in1: f32[32]" in text, text
    assert "(f16)" in text and "(f32)" in text, text
    text = str(ljt.explain(ljt.trace(f), x, w))
    assert "in in0: f16[R, 32]" in text and "out out0: f32[R, 32]" in text, text
    assert "input     in0 = x (f16)" in text, text


def test_mixed_types_promote_as_torch_does():
    # bf16 * f32 is f32 in torch: the kernel reads each as stored and
    # computes what eager computes, bit for bit.
    def f(x, w, b):
        return x * w + b
    x = torch.randn(5, 48).to(torch.bfloat16)
    w, b = torch.randn(48), torch.randn(48).to(torch.float16)
    compiled, sink = compile_recorded(f, rest="eager")
    with torch.no_grad():
        got, want = compiled(x, w, b), f(x, w, b)
    assert got.dtype == torch.float32 and torch.equal(got, want)
    (group,) = sink[0].groups
    assert group["input_dtypes"] == ["bf16", "f32", "f16"], group
    traced = ljt.trace(f)
    with torch.no_grad():
        assert torch.equal(traced(x, w, b), want)


def test_rope_broadcast_over_heads_in_bf16():
    # cos/sin [T, D] against q [B, H, T, D]: the operator launches the kernel
    # per head at element offsets of the bf16 buffers.
    g = torch.Generator().manual_seed(2)
    q = torch.randn(2, 4, 9, 16, generator=g).to(torch.bfloat16)
    cos, sin = (torch.randn(9, 16, generator=g).to(torch.bfloat16) for _ in range(2))
    compiled, sink = compile_recorded(rope, rest="eager")
    with torch.no_grad():
        got, want = compiled(q, cos, sin), rope(q, cos, sin)
    assert close(got, want, torch.bfloat16)
    exact = rope(q.double(), cos.double(), sin.double())
    assert bool(((got.double() - exact).abs() <= 2 * half_ulp(exact, torch.bfloat16)
                 + 1e-5).all())
    assert [g["input_dtypes"] for g in sink[0].groups] == [["bf16"] * 3]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_trace_seed_operators_take_the_c_path(dtype):
    for name, fn, args in seed_cases(17, 65):
        if isinstance(fn, torch.nn.Module):
            fn = copy.deepcopy(fn).to(dtype)
        args = tuple(a.to(dtype) for a in args)
        checked = ljt.trace(fn, check=True)
        fast = ljt.trace(fn)
        with torch.no_grad():
            want = checked(*args)  # compared with eager in the type's tolerance
            # The first call's result is the eager run that recorded the
            # graph's values; later ones are the kernel's.
            first, again, third = fast(*args), fast(*args), fast(*args)
        assert want.dtype == dtype and close(first, want, dtype), name
        assert torch.equal(again, want) and torch.equal(third, want), name
        assert _lj._fast_count(fast) == 1, name  # a C entry: bf16/f16 guarded by type
        assert fast.last[0] is not None and len(fast.last[0].groups) == 1, name


def test_trace_decoder_block():
    torch.manual_seed(0)
    block = DecoderBlock().eval().to(torch.bfloat16)
    traced = ljt.trace(block, check=True)
    args = block_inputs(9, torch.bfloat16)
    with torch.no_grad():
        y = traced(*args)
        info = ljt.explain(traced, *args)
    assert y.dtype == torch.bfloat16 and len(info.groups) >= 5
    assert all("bf16[R" in g["program"] for g in info.groups)


def test_autocast_region_dynamo():
    torch.manual_seed(0)
    block = DecoderBlock().eval()
    compiled, sink = compile_recorded(block, rest="eager")
    args = block_inputs(9)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        got, want = compiled(*args), block(*args)
    assert got.dtype == want.dtype
    assert close(got, want, torch.bfloat16)
    dtypes = {d for r in sink for g in r.groups for d in g["input_dtypes"] + g["output_dtypes"]}
    assert dtypes == {"f32", "bf16"}, dtypes  # the matmuls' bf16 results are read as stored


def test_autocast_region_trace():
    torch.manual_seed(0)
    block = DecoderBlock().eval()
    traced = ljt.trace(block)
    args = block_inputs(9)
    results = {}
    with torch.no_grad():
        for autocast in (True, False, True, False):
            ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else \
                contextlib.nullcontext()
            with ctx:
                # (A specialization's first call returns the eager run that recorded it.)
                got, want = [traced(*args) for _ in range(3)][-1], block(*args)
            assert got.dtype == want.dtype
            assert close(got, want, torch.bfloat16)
            assert torch.equal(results.setdefault(autocast, got), got)
    assert not torch.equal(results[True], results[False])
    # Autocast is part of the key: one specialization each, and C entries
    # only for calls outside it (the C path does not see autocast).
    assert len(traced.cache) == 2
    assert _lj._fast_count(traced) == 1
