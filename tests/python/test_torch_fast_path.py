# lanejit.torch's fast path (docs/torch.md, "Per-call cost"): a repeated
# call with a key seen before skips the full guard and, when the whole
# graph is one kernel on the arguments, calls the kernel directly. Every
# guard still holds on a cached key and results are bit-identical to the
# full path (the specialization's forward).
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import lanejit.torch as ljt  # noqa: E402
from lanejit import _lanejit  # noqa: E402
from torch_models import DecoderBlock, seed_cases  # noqa: E402


def warm(compiled, *args):
    """First call (recording run), second call (installs the fast entry)."""
    compiled(*args)
    compiled(*args)


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("rows,cols", [(17, 65), (3, 1), (2, 34)])
def test_seed_operators_call_their_kernel_directly_with_the_same_bits(case, rows, cols):
    name, fn, args = seed_cases(rows, cols)[case]
    compiled = ljt.trace(fn)
    with torch.no_grad():
        warm(compiled, *args)
        (last, runner), = compiled._fast.values()
        spec = last[0]
        assert isinstance(runner, _lanejit.Kernel) or runner is not spec.forward, name
        fast = compiled(*args)
        assert compiled.last == (spec, None)
        assert torch.equal(fast, spec.forward(*args)), name
        again = compiled(*args)
        assert again.data_ptr() != fast.data_ptr() and torch.equal(again, fast)


def test_guards_hold_on_a_cached_key():
    compiled = ljt.trace(lambda a, b: F.silu(a) * b)
    x, y = torch.randn(5, 33), torch.randn(5, 33)
    with torch.no_grad():
        warm(compiled, x, y)
    want = F.silu(x) * y
    # requires_grad under grad mode: falls back, with a backward
    xg = x.clone().requires_grad_(True)
    out = compiled(xg, y)
    assert out.grad_fn is not None and "requires grad" in compiled.last[1]
    assert torch.equal(out.detach(), F.silu(x) * y)
    # the same inputs under grad mode (no grad needed) still run the kernel
    got = compiled(x, y)
    assert compiled.last[1] is None and got.grad_fn is None
    with torch.no_grad():
        # float64: not a kernel, torch's own result
        got = compiled(x.double(), y.double())
        assert got.dtype == torch.float64 and torch.equal(got, F.silu(x.double()) * y.double())
        # non-contiguous with the same shape: correct (copied for the kernel)
        xt = x.t().contiguous().t()
        assert not xt.is_contiguous()
        torch.testing.assert_close(compiled(xt, y), want, atol=5e-5, rtol=5e-5)
        # a new last-dim size: a new specialization
        x2, y2 = torch.randn(5, 34), torch.randn(5, 34)
        for _ in range(3):
            torch.testing.assert_close(compiled(x2, y2), F.silu(x2) * y2, atol=5e-5, rtol=5e-5)
        assert len(compiled.cache) >= 2


def test_parameters_requiring_grad_fall_back_every_call_in_grad_mode():
    name, ln, (x,) = seed_cases(4, 33)[1]
    compiled = ljt.trace(ln)
    with torch.no_grad():
        warm(compiled, x)
    for _ in range(2):
        out = compiled(x)  # grad mode on, weight requires grad
        assert out.grad_fn is not None and "requires grad" in compiled.last[1]
    for p in ln.parameters():
        p.requires_grad_(False)
    got = compiled(x)
    assert compiled.last[1] is None and got.grad_fn is None
    for p in ln.parameters():
        p.requires_grad_(True)
    assert compiled(x).grad_fn is not None


def test_in_place_parameter_updates_are_seen():
    name, ln, (x,) = seed_cases(4, 33)[1]
    compiled = ljt.trace(ln)
    with torch.no_grad():
        warm(compiled, x)
        for p in ln.parameters():
            p.mul_(1.5).add_(0.25)
        torch.testing.assert_close(compiled(x), ln(x), atol=5e-5, rtol=5e-5)


def test_check_mode_still_compares_every_call(monkeypatch):
    compiled = ljt.trace(F.silu, check=True)
    x = torch.randn(3, 9)
    with torch.no_grad():
        warm(compiled, x)
        assert compiled._fast == {}
        calls = []
        monkeypatch.setattr(compiled, "original", lambda *a: calls.append(1) or F.silu(*a))
        compiled(x)
        assert calls == [1]


def test_graphs_that_are_not_one_kernel_use_their_forward():
    torch.manual_seed(0)
    block = DecoderBlock(c=32, heads=2, hidden=48).eval()
    x = torch.randn(1, 5, 32)
    cos, sin = torch.randn(5, 16), torch.randn(5, 16)
    compiled = ljt.trace(block)
    with torch.no_grad():
        warm(compiled, x, cos, sin)
        (last, runner), = compiled._fast.values()
        assert runner == last[0].forward
        torch.testing.assert_close(compiled(x, cos, sin), block(x, cos, sin),
                                   atol=5e-5, rtol=5e-5)
