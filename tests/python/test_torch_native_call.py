# lanejit.torch's call path in C (_lanejit.FastCalls, docs/torch.md
# "Per-call cost"): an entry registered after a call ran the full way runs
# the kernel's native entry with no Python code. It must give the bits of
# the full path and of the plain kernel call, and every guard must still
# send a call that does not match down the full path.
import re

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import lanejit.torch as ljt  # noqa: E402
from lanejit import _lanejit  # noqa: E402
from lanejit.torch import ops  # noqa: E402
from lanejit.torch.direct import direct_call  # noqa: E402
from torch_models import DecoderBlock, seed_cases  # noqa: E402



def warm(compiled, *args):
    compiled(*args)  # the recording run
    compiled(*args)  # registers the entry


def adapter_built():
    try:
        import lanejit._lanejit_torch  # noqa: F401
        return True
    except ImportError:
        return False


pytestmark = pytest.mark.skipif(not adapter_built(), reason="built without the torch adapter")


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("rows,cols", [(17, 65), (3, 1), (2, 34), (1, 33), (40, 129)])
def test_native_entry_gives_the_bits_of_the_full_path_and_the_plain_kernel(case, rows, cols):
    name, fn, args = seed_cases(rows, cols)[case]
    compiled = ljt.trace(fn)
    with torch.no_grad():
        warm(compiled, *args)
        assert _lanejit._fast_count(compiled) == 1, name
        spec = compiled.last[0]
        compiled.last = None
        fast = compiled(*args)
        assert compiled.last == (spec, None)  # the C entry set it
        assert torch.equal(fast, spec.forward(*args)), name
        _, _, (kernel, sources, pick) = direct_call(spec, args)
        plain = kernel(*[args[s] if isinstance(s, int) else s for s in sources])
        assert torch.equal(fast, plain if pick == 0 else plain[pick]), name
        again = compiled(*args)
        assert again.data_ptr() != fast.data_ptr() and torch.equal(again, fast)
        assert fast.shape == fn(*args).shape and fast.is_contiguous()


def test_large_calls_release_the_gil_and_match():
    name, fn, args = seed_cases(300, 257)[3]  # rmsnorm: above the GIL threshold
    compiled = ljt.trace(fn)
    with torch.no_grad():
        warm(compiled, *args)
        assert _lanejit._fast_count(compiled) == 1
        assert torch.equal(compiled(*args), compiled.last[0].forward(*args))


def test_every_guard_falls_back_through_the_native_path():
    compiled = ljt.trace(lambda a, b: F.silu(a) * b)
    x, y = torch.randn(5, 33), torch.randn(5, 33)
    with torch.no_grad():
        warm(compiled, x, y)
        bits = compiled(x, y)  # the kernel's
    assert _lanejit._fast_count(compiled) == 1
    want = F.silu(x) * y
    # requires_grad under grad mode: the original runs, with a backward
    xg = x.clone().requires_grad_(True)
    out = compiled(xg, y)
    assert out.grad_fn is not None and "requires grad" in compiled.last[1]
    assert torch.equal(out.detach(), want)  # torch's own
    # the same tensors under grad mode, none requiring grad: the entry runs
    compiled.last = None
    got = compiled(x, y)
    assert compiled.last[1] is None and got.grad_fn is None and torch.equal(got, bits)
    with torch.no_grad():
        # requires_grad without grad mode: the kernel
        got = compiled(xg, y)
        assert compiled.last[1] is None and torch.equal(got, bits)
        # another dtype: torch's own result
        got = compiled(x.double(), y.double())
        assert got.dtype == torch.float64 and torch.equal(got, F.silu(x.double()) * y.double())
        # not on the CPU: the original runs, with the reason
        got = compiled(x.to("meta"), y.to("meta"))
        assert got.device.type == "meta" and "meta" in compiled.last[1]
        # the same shape with other strides: correct (a miss, then its own entry)
        xt = x.t().contiguous().t()
        assert not xt.is_contiguous()
        for _ in range(3):
            torch.testing.assert_close(compiled(xt, y), want, atol=5e-5, rtol=5e-5)
        # a row-strided view
        wide = torch.randn(5, 40)
        xv = wide[:, :33]
        for _ in range(3):
            torch.testing.assert_close(compiled(xv, y), F.silu(xv) * y, atol=5e-5, rtol=5e-5)
        # a new last-dim size: a new specialization, then its own entry
        x2, y2 = torch.randn(5, 34), torch.randn(5, 34)
        for _ in range(3):
            torch.testing.assert_close(compiled(x2, y2), F.silu(x2) * y2, atol=5e-5, rtol=5e-5)
        assert len(compiled.cache) >= 2
        # the first shape still hits its entry with the same bits
        assert torch.equal(compiled(x, y), bits)
        # broadcasting a row of y: not an entry's layout, still torch's numbers
        y1 = torch.randn(1, 33)
        torch.testing.assert_close(compiled(x, y1), F.silu(x) * y1, atol=5e-5, rtol=5e-5)
        # a non-tensor argument
        torch.testing.assert_close(compiled(x, 2.0), F.silu(x) * 2.0, atol=5e-5, rtol=5e-5)


@pytest.mark.parametrize("warmed", [False, True])
def test_wrong_argument_counts_raise_type_error(warmed):
    compiled = ljt.trace(lambda a, b: F.silu(a) * b)
    x = torch.randn(3, 8)
    with torch.no_grad():
        if warmed:
            warm(compiled, x, x)
        for args in [(x, x, x), (x,), (), (x, x, x, x)]:
            for _ in range(3):
                with pytest.raises(TypeError):
                    compiled(*args)
        name, ln, (y,) = seed_cases(4, 33)[1]
        module = ljt.trace(ln)
        if warmed:
            warm(module, y)
        with pytest.raises(TypeError):
            module(y, y)
        with pytest.raises(TypeError):
            module()


def test_parameters_are_guarded_on_every_call():
    name, ln, (x,) = seed_cases(4, 33)[1]
    compiled = ljt.trace(ln)
    with torch.no_grad():
        warm(compiled, x)
        assert _lanejit._fast_count(compiled) == 1
        for p in ln.parameters():
            p.mul_(1.5).add_(0.25)  # in place: the entry reads the new values
        assert torch.equal(compiled(x), compiled.last[0].forward(x))
        torch.testing.assert_close(compiled(x), ln(x), atol=5e-5, rtol=5e-5)
        ln.weight.data = torch.randn(33)  # a new tensor of the same layout
        torch.testing.assert_close(compiled(x), ln(x), atol=5e-5, rtol=5e-5)
    out = compiled(x)  # grad mode, the weight requires grad: the original
    assert out.grad_fn is not None and "requires grad" in compiled.last[1]


def test_check_mode_never_uses_an_entry(monkeypatch):
    compiled = ljt.trace(F.silu)
    x = torch.randn(3, 9)
    with torch.no_grad():
        warm(compiled, x)
        assert _lanejit._fast_count(compiled) == 1
        compiled.check = True
        calls = []
        monkeypatch.setattr(compiled, "original", lambda *a: calls.append(1) or F.silu(*a))
        compiled(x)
        assert calls == [1]


def test_graphs_that_are_not_one_kernel_run_their_forward_from_the_entry():
    torch.manual_seed(0)
    block = DecoderBlock(c=32, heads=2, hidden=48).eval()
    x = torch.randn(1, 5, 32)
    cos, sin = torch.randn(5, 16), torch.randn(5, 16)
    compiled = ljt.trace(block)
    with torch.no_grad():
        warm(compiled, x, cos, sin)
        assert _lanejit._fast_count(compiled) == 1
        compiled.last = None
        got = compiled(x, cos, sin)
        assert compiled.last[1] is None
        assert torch.equal(got, compiled.last[0].forward(x, cos, sin))
        torch.testing.assert_close(got, block(x, cos, sin), atol=5e-5, rtol=5e-5)


def test_a_compiled_callable_is_collected():
    import gc
    import weakref
    compiled = ljt.trace(lambda a: F.silu(a) * a)
    x = torch.randn(2, 8)
    with torch.no_grad():
        warm(compiled, x)
    ref = weakref.ref(compiled)
    del compiled
    gc.collect()
    assert ref() is None


class _MaskedSoftmax(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = torch.nn.Softmax(dim=-1)

    def forward(self, s, m):
        return self.softmax(s.masked_fill(m, float("-inf")))


@pytest.mark.parametrize("form", ["masked_fill", "where", "where_flipped", "module", "log"])
def test_softmax_after_a_neg_inf_fill_matches_eager_with_special_rows(form, monkeypatch):
    module = _MaskedSoftmax()

    def fn(s, m):
        if form == "masked_fill":
            return torch.softmax(s.masked_fill(m, float("-inf")), dim=-1)
        if form == "where":
            return torch.softmax(torch.where(~m, s, float("-inf")), dim=-1)
        if form == "where_flipped":
            return F.softmax(torch.where(m, float("-inf"), s), dim=-1)
        if form == "module":
            return module(s, m)
        return torch.log_softmax(s.masked_fill(m, float("-inf")), dim=-1)
    torch.manual_seed(1)
    for cols in (1, 7, 16, 33, 65):
        s = torch.randn(9, cols) * 30
        m = torch.rand(9, cols) < 0.6
        m[0] = True                        # a fully masked row: NaN
        s[1, 0] = float("inf")             # +inf unmasked
        m[1, 0] = False
        s[2] = float("-inf")               # every unmasked value -inf
        s[3, -1] = float("nan")            # NaN under the mask
        m[3, -1] = True
        s[4, 0] = float("nan")             # NaN not masked
        m[4, 0] = False
        s[5] = -200.0                      # underflowing exponents
        compiled = ljt.trace(module if form == "module" else fn)
        with torch.no_grad():
            for _ in range(3):
                got, want = compiled(s, m), fn(s, m)
                assert compiled.last[0] is not None and compiled.last[0].groups
                torch.testing.assert_close(got, want, atol=5e-5, rtol=5e-5, equal_nan=True)
            # the filled lanes are selected after the exp, not fed to it
            text = str(compiled.last[0].groups[0].program)
            exp = re.search(r"(%\d+) = exp (%\d+)", text)
            assert exp and re.search(rf"= select [^\n]*{exp.group(1)}\b", text), text
            assert not re.search(rf"{exp.group(2)} = select", text), text
            # the same bits as the exp of the filled value (NaN where it is NaN)
            with monkeypatch.context() as mp:
                mp.setattr(ops, "_is_neg_inf", lambda v: False)
                plain = ljt.trace(module if form == "module" else fn)
                old = plain(s, m)
                old = plain(s, m)
                assert str(plain.last[0].groups[0].program) != text  # really the other lowering
            nan = torch.isnan(got)
            assert torch.equal(nan, torch.isnan(old))
            assert torch.equal(got[~nan], old[~nan])


def test_threads_share_the_entries():
    import threading
    for rows, cols in ((17, 65), (300, 257)):  # below and above the GIL threshold
        name, fn, args = seed_cases(rows, cols)[3]
        compiled = ljt.trace(fn)
        with torch.no_grad():
            warm(compiled, *args)
            want = compiled(*args)
        bad = []

        def work():
            with torch.no_grad():
                for _ in range(50):
                    if not torch.equal(compiled(*args), want):
                        bad.append(1)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not bad and _lanejit._fast_count(compiled) == 1
