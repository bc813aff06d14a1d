# lanejit.torch (docs/torch.md): PyTorch code compiled to lanejit kernels
# matches eager torch at atol = rtol = 5e-5; what cannot run as a kernel
# stays torch (or the whole call falls back) with its reason in explain().
import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import lanejit.torch.ops  # noqa: E402
import lanejit.torch as ljt  # noqa: E402
from torch_models import DecoderBlock, RMSNorm, seed_cases  # noqa: E402

TOL = 5e-5


def assert_close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    err = (got.double() - want.double()).abs()
    bad = err > TOL + TOL * want.double().abs()
    assert not bad.any(), f"{int(bad.sum())} elements differ, worst {err.max().item()}"


def run(fn, *args, groups=None):
    """Compiles fn, runs it under no_grad, compares with eager; returns the
    explanation."""
    with torch.no_grad():
        compiled = ljt.trace(fn)
        got = compiled(*args)
        want = fn(*args)
        assert_close(got, want)
        info = ljt.explain(compiled, *args)
    assert info.fallback is None, str(info)
    if groups is not None:
        assert len(info.groups) == groups, str(info)
    return info


@pytest.mark.parametrize("shape", [(17, 65), (3, 5, 65), (2, 3, 4, 33), (1, 4097), (9, 1)])
@pytest.mark.parametrize("name", ["rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual",
                                  "masked_softmax"])
def test_seed_operators_are_one_kernel_each(name, shape):
    rows, cols = math.prod(shape[:-1]), shape[-1]
    fn, args = {n: (f, a) for n, f, a in seed_cases(rows, cols)}[name]
    args = tuple(a.reshape(*shape[:-1], a.shape[-1]) if a.dim() == 2 else a for a in args)
    if name == "masked_softmax":  # causal over the last two dims
        args = (torch.randn(*shape[:-1], shape[-1]),)
    info = run(fn, *args, groups=1)
    if name == "masked_softmax":
        assert "not needed: the kernel computes this mask" in str(info)
        assert "select" in info.groups[0]["program"]


class ResidualNorm(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = RMSNorm(c)

    def forward(self, x, r):
        return self.norm(x + r)


def test_residual_add_then_rmsnorm_and_random_data_are_one_kernel():
    info = run(ResidualNorm(96), torch.randn(5, 7, 96), torch.randn(5, 7, 96), groups=1)
    assert "reduce.mean" in info.groups[0]["program"]


OPS = {
    "neg_abs": lambda x: -x + torch.abs(x),
    "exp_log": lambda x: torch.exp(x * 0.5) + torch.log(x.abs() + 1),
    "sqrt_rsqrt": lambda x: torch.sqrt(x.abs()) * x.abs().add(1).rsqrt(),
    "tanh_sigmoid": lambda x: torch.tanh(x) - torch.sigmoid(x),
    "relu_silu": lambda x: F.relu(x) + F.silu(x) + torch.relu(-x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_erf": lambda x: F.gelu(x),
    "gelu_module": torch.nn.GELU(),
    "erf": lambda x: torch.erf(x) * 3,
    "pow": lambda x: x.pow(2) + x ** 2 + torch.pow(x.abs(), 0.5),
    "clamp": lambda x: x.clamp(-0.5, 0.7) + torch.clamp(x, min=0.1) + x.clamp_max(0.2),
    "min_max": lambda x: torch.maximum(x, x * 0.3) - torch.minimum(x, 0.5 * x),
    "where": lambda x: torch.where(x > 0.2, x, x * 0.1),
    "masked_fill": lambda x: x.masked_fill(x < -0.5, 0.0),
    "comparisons": lambda x: torch.where((x >= 0) & (x != 1) | (x == 0.5), x, -x),
    "sum_mean": lambda x: x - x.sum(-1, keepdim=True) / x.mean(dim=-1, keepdim=True),
    "sum_no_keepdim": lambda x: x.sum(-1),
    "amax_amin": lambda x: (x - x.amax(-1, keepdim=True)) * x.amin(-1, keepdim=True),
    "max_min_values": lambda x: x.max(-1, keepdim=True)[0] + x.min(dim=-1, keepdim=True).values,
    "var_unbiased": lambda x: x / torch.var(x, -1, keepdim=True),
    "var_biased": lambda x: x.var(-1, unbiased=False),
    "softmax": lambda x: F.softmax(x, dim=-1) + x.softmax(-1),
    "log_softmax": lambda x: F.log_softmax(x, dim=-1),
    "layer_norm_plain": lambda x: F.layer_norm(x, (x.shape[-1],)),
    "layer_norm_module": torch.nn.LayerNorm(66),
    "chunk_cat": lambda x: torch.cat([x.chunk(2, dim=-1)[1], x.chunk(2, dim=-1)[0]], dim=-1) * x,
    "split_cat": lambda x: torch.cat([x.split(22, -1)[0], x.split([22, 44], -1)[1] * 3], -1),
    "slices": lambda x: x[..., 3:40] * x[:, :, 10:47],
    "per_row_param": lambda x: x * x[..., :1],
    "to_float": lambda x: (x.float() * 2).to(torch.float32).type_as(x),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_supported_op_matches_eager(name):
    run(OPS[name], torch.randn(3, 7, 66), groups=1)


def test_broadcast_parameters_and_per_row_tensors():
    w = torch.randn(66)
    row = torch.randn(3, 7, 1)
    info = run(lambda x, r: x * w + r * x + w.view(1, 1, 66), torch.randn(3, 7, 66), row,
               groups=1)
    assert "f32[66]" in info.groups[0]["program"] and "f32[R, 1]" in info.groups[0]["program"]


def test_decoder_block_end_to_end():
    torch.manual_seed(0)
    block = DecoderBlock()
    x = torch.randn(2, 9, 64)
    cos, sin = torch.randn(9, 16), torch.randn(9, 16)
    info = run(block, x, cos, sin)
    text = str(info)
    assert len(info.groups) >= 5, text  # norms, RoPE, softmax, SwiGLU, residuals
    assert "matmul is not a row operation" in text
    assert "module Linear is not a row operation" in text
    with torch.no_grad():
        assert_close(ljt.trace(block, check=True)(x, cos, sin), block(x, cos, sin))


def test_grad_mode_falls_back_with_reason():
    norm = RMSNorm(65)
    x = torch.randn(4, 65)
    compiled = ljt.trace(norm)
    y = compiled(x)  # parameters require grad and grad mode is on
    assert y.requires_grad
    y.sum().backward()
    assert norm.weight.grad is not None
    assert "requires grad while grad mode is on" in str(ljt.explain(compiled, x))
    with torch.no_grad():
        assert ljt.explain(compiled, x).fallback is None


@pytest.mark.parametrize("fn,args,reason", [
    (lambda x: x.sum(0), (torch.randn(4, 8),), "reduces over dim 0, not the last dim"),
    (lambda x: x.pow(2.5), (torch.randn(4, 8),), "pow with exponent 2.5"),
    (lambda x: x @ x.t(), (torch.randn(4, 4),), "matmul is not a row operation"),
    (lambda x: torch.exp(x), (torch.randn(4, 8, dtype=torch.float64),), "float64, not float32"),
    (lambda x: x.max(-1)[1] + x.exp().sum(-1), (torch.randn(4, 8),), "indices are used"),
    (lambda x: x.cumsum(-1), (torch.randn(4, 8),), "cumsum is not a row operation"),
    (lambda x: F.layer_norm(x, x.shape[-2:]), (torch.randn(3, 4, 8),), "not the last dim alone"),
])
def test_unsupported_pattern_stays_torch_with_reason(fn, args, reason):
    with torch.no_grad():
        compiled = ljt.trace(fn)
        assert_close(compiled(*args), fn(*args))
        text = str(ljt.explain(compiled, *args))
    assert reason in text, text


def test_untraceable_function_falls_back():
    def branchy(x):
        return x.exp() if x.sum() > 0 else -x  # data-dependent control flow
    compiled = ljt.trace(branchy)
    x = torch.randn(3, 8)
    with torch.no_grad():
        assert torch.equal(compiled(x), branchy(x))
    assert "symbolic_trace failed" in str(ljt.explain(compiled, x))


def test_keyword_arguments_fall_back():
    compiled = ljt.trace(lambda x, y=None: x.exp())
    with torch.no_grad():
        compiled(torch.ones(2, 3), y=1)
    assert "keyword arguments" in compiled.last[1]


def test_recompiles_for_a_new_column_count_and_caches():
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
    compiled = ljt.trace(rms)
    with torch.no_grad():
        for c in (65, 66, 65, 4097, 66):
            x, w = torch.randn(5, c), torch.randn(c)
            assert_close(compiled(x, w), rms(x, w))
    assert len(compiled.cache) == 3
    texts = {str(s.groups[0].program) for s in compiled.cache.values()}
    assert any("f32[R, 4097]" in t for t in texts) and len(texts) == 3


def test_non_contiguous_inputs():
    x = torch.randn(8, 130)[:, ::2]  # column stride 2: copied for the kernel
    y = torch.randn(65, 8).t()
    run(lambda a, b: F.silu(a) * b, x, y, groups=1)


def test_check_mode_catches_a_wrong_kernel(monkeypatch):
    x = torch.randn(4, 33)
    with torch.no_grad():
        ljt.trace(F.silu, check=True)(x)  # right: no error
        wrong = lambda lw, node: lanejit.torch.ops.elementwise(  # noqa: E731
            lambda v: v * lanejit.torch.ops._lj.sigmoid(v) * 1.001, lw.val(node.args[0]))
        monkeypatch.setitem(lanejit.torch.ops._NAMED, "silu", wrong)
        compiled = ljt.trace(F.silu, check=True)
        with pytest.raises(ljt.CheckError, match="differ from eager"):
            compiled(x)
        assert len(ljt.explain(compiled, x).groups) == 1


def test_explain_is_readable():
    with torch.no_grad():
        text = str(ljt.explain(ljt.trace(RMSNorm(65)), torch.randn(3, 65)))
    assert "1 subgraph(s) run as lanejit kernels" in text
    assert "replaced" in text and "program rmsnorm_0 {" in text and "rsqrt" in text


def test_in_place_operations_fall_back():
    def mutating(x, y):
        z = x.exp()
        x.add_(1)
        return z + x * y
    x, y = torch.randn(3, 8), torch.randn(3, 8)
    compiled = ljt.trace(mutating)
    with torch.no_grad():
        got = compiled(x.clone(), y)
        assert torch.equal(got, mutating(x.clone(), y))
    assert "in-place operation add_" in compiled.last[1]


def test_first_call_returns_the_recording_run_then_kernels_run():
    compiled = ljt.trace(lambda x: torch.exp(x) + x)
    x = torch.randn(2, 5)
    with torch.no_grad():
        first = compiled(x)          # the specializing run (eager values) is the result
        spec = next(iter(compiled.cache.values()))
        assert spec.first_result is None
        assert_close(first, torch.exp(x) + x)
        assert_close(compiled(x), torch.exp(x) + x)   # now the kernel
