# torch.compile(model, backend="lanejit") (python/lanejit/dynamo.py): a
# Llama-style decoder block forward at seq 1 and 128 and a training step
# against eager, with Inductor or eager for the rest; a new sequence length
# reusing the kernels; a graph with no row program; each fallback reason;
# the backend found by name through its entry point.
import copy
import os
import subprocess
import sys
import tempfile

import pytest

torch = pytest.importorskip("torch")

import lanejit  # noqa: E402
import lanejit.torch as ljt  # noqa: E402
from lanejit import dynamo  # noqa: E402
from lanejit.torch import row_op  # noqa: E402
from lanejit.torch.graph_pass import GraphRecord, lower_graph  # noqa: E402
from torch_models import DecoderBlock  # noqa: E402

TOL = 5e-5
# Inductor's compiled code cache: in the build tree when ctest runs us.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(
    os.environ.get("LANEJIT_BUILD_DIR") or tempfile.gettempdir(), "torchinductor-cache"))


@pytest.fixture(autouse=True)
def fresh_dynamo():
    # Dynamo keeps what it saw per code object (a length seen before makes
    # the next one dynamic): each test starts from nothing.
    torch._dynamo.reset()
    yield


def run_python(code):
    """Runs code in a fresh interpreter (nothing imported yet); asserts it passed."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def close(a, b, tol=TOL):
    a, b = a.double(), b.double()
    return bool(((a - b).abs() <= tol + tol * b.abs()).all())


def block_inputs(t, b=1, c=64, heads=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = c // heads
    return (torch.randn(b, t, c, generator=g), torch.randn(t, d, generator=g),
            torch.randn(t, d, generator=g))


def compile_recorded(model, **options):
    """torch.compile with the lanejit backend, its graph records kept apart."""
    sink = []

    def backend(gm, example_inputs):
        return dynamo.backend(gm, example_inputs, options=options, _sink=sink)
    return torch.compile(model, backend=backend), sink


def kernels(sink):
    return [g for r in sink for g in r.groups]


@pytest.mark.parametrize("rest", ["inductor", "eager"])
@pytest.mark.parametrize("seq", [1, 128])
def test_block_forward(seq, rest):
    torch.manual_seed(0)
    block = DecoderBlock().eval()
    compiled, sink = compile_recorded(block, rest=rest)
    args = block_inputs(seq)
    with torch.no_grad():
        got, want = compiled(*args), block(*args)
    assert close(got, want)
    assert all(r.error is None for r in sink), [r.error for r in sink]
    programs = [g["program"] for g in kernels(sink)]
    # RMSNorm (mean of squares), RoPE (slices), SwiGLU (exp), residuals.
    assert any("reduce.mean" in p for p in programs), programs
    assert any("slice" in p for p in programs), programs
    assert any("exp" in p for p in programs), programs
    if seq > 1:  # the causal softmax: a max and a sum in one kernel, mask from indices
        assert any("reduce.max" in p and "reduce.sum" in p for p in programs), programs


@pytest.mark.parametrize("rest", ["inductor", "eager"])
def test_training_step_matches_eager(rest):
    torch.manual_seed(0)
    block = DecoderBlock()
    reference = copy.deepcopy(block)
    compiled, sink = compile_recorded(block, rest=rest)
    opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
    opt_ref = torch.optim.AdamW(reference.parameters(), lr=1e-3)
    x, cos, sin = block_inputs(32, b=2)
    for _ in range(2):
        for model, o in ((compiled, opt), (reference, opt_ref)):
            o.zero_grad()
            loss = model(x, cos, sin).square().mean()
            loss.backward()
            o.step()
            if model is compiled:
                loss_got = loss.detach()
            else:
                loss_want = loss.detach()
        assert close(loss_got, loss_want)
        for (name, p), q in zip(block.named_parameters(), reference.parameters()):
            assert close(p.grad, q.grad, 1e-4), name
    for p, q in zip(block.parameters(), reference.parameters()):
        assert close(p.detach(), q.detach())
    # A forward and a backward graph, each with row programs.
    assert len(sink) >= 2 and all(r.groups for r in sink), [len(r.groups) for r in sink]


def test_new_sequence_length_reuses_the_kernels():
    torch.manual_seed(0)
    block = DecoderBlock().eval()
    compiled, sink = compile_recorded(block)
    with torch.no_grad():
        for t in (16, 24):  # the second length makes Dynamo mark it dynamic
            args = block_inputs(t)
            assert close(compiled(*args), block(*args))
        graphs, compiles = len(sink), row_op.compiles
        dynamic_kernels = kernels(sink[-1:])
        # Kernels over symbolic rows (R an expression of the sequence length).
        assert any(not g["rows"].isdigit() for g in dynamic_kernels), dynamic_kernels
        for t in (40, 57, 128):
            args = block_inputs(t)
            assert close(compiled(*args), block(*args))
    assert len(sink) == graphs, "a new sequence length recompiled the graph"
    assert row_op.compiles == compiles, "a new sequence length compiled lanejit kernels"


def test_graph_without_row_program():
    compiled, sink = compile_recorded(lambda a, b: a @ b)
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    with torch.no_grad():
        assert torch.equal(compiled(a, b), a @ b)
    assert len(sink) == 1 and not sink[0].groups and sink[0].error is None
    assert "mm" in " ".join(op for op, _ in sink[0].torch_nodes.values())


def test_dtype_lanejit_lacks_stays_in_torch():
    # (bf16 and f16 are kernels: test_torch_half.py.)
    def f(x, w):
        h = x.to(torch.float64)
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-5)).float() * w
    compiled, sink = compile_recorded(f)
    x, w = torch.randn(4, 64), torch.randn(64)
    with torch.no_grad():
        got, want = compiled(x, w), f(x, w)
    assert torch.allclose(got, want, atol=1e-5, rtol=1e-5)
    reasons = [r for _, r in sink[0].torch_nodes.values()]
    assert any("float64, not float32, bfloat16 or float16" in r for r in reasons), reasons


def test_data_dependent_shape_stays_in_torch():
    def f(x):
        y = x[x > 0]
        return torch.exp(y) * 2
    x = torch.randn(64)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        compiled, sink = compile_recorded(f)
        with torch.no_grad():
            assert torch.allclose(compiled(x), f(x))
    reasons = [r for rec in sink for _, r in rec.torch_nodes.values()]
    assert any("last dim is symbolic" in r for r in reasons), reasons


def test_strided_input_is_copied_and_said():
    def f(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
    compiled, sink = compile_recorded(f)
    base = torch.randn(3, 64, 5)
    x = base.transpose(1, 2)  # [3, 5, 64], last dim stride 5
    w = torch.randn(64)
    with torch.no_grad():
        assert close(compiled(x, w), f(x, w))
    notes = [n for g in kernels(sink) for n in g["notes"]]
    assert any("copied for each call" in n for n in notes), notes


def test_other_device_stays_in_torch():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    try:
        with mode:
            x = torch.empty(4, 64, device="cuda")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"this torch cannot make fake CUDA tensors: {e}")

    def f(x):
        return torch.exp(x) * 2
    with mode:
        gm = make_fx(f)(x)  # an ATen graph whose values are CUDA tensors
    rec = GraphRecord("cuda graph")
    lower_graph(gm.graph, {}, rec)
    assert not rec.groups
    reasons = [r for _, r in rec.torch_nodes.values()]
    assert any("cuda" in r for r in reasons), reasons


def test_a_failing_pass_leaves_the_graph_to_torch(monkeypatch):
    def broken(program, signature):
        raise RuntimeError("injected")
    monkeypatch.setattr("lanejit.torch.graph_pass.kernel_for", broken)
    block = DecoderBlock().eval()
    compiled, sink = compile_recorded(block)
    args = block_inputs(8)
    with torch.no_grad():
        assert close(compiled(*args), block(*args))
    assert not kernels(sink)
    assert any("injected" in r for rec in sink for _, r in rec.torch_nodes.values())


def test_explain_names_kernels_and_what_inductor_keeps():
    block = DecoderBlock().eval()
    model = ljt.compile(block)
    args = block_inputs(9)
    with torch.no_grad():
        assert close(model(*args), block(*args))
        info = ljt.explain(model, *args)
    text = str(info)
    assert "lanejit kernel(s)" in text and "program row_program_0" in text
    assert "left to inductor" in text and "mm" in text
    assert info.groups and info.torch_nodes


def test_check_option_compares_with_eager():
    block = DecoderBlock().eval()
    model = ljt.compile(block, check=True, rest="eager")
    with torch.no_grad():
        model(*block_inputs(5))


def test_backend_found_by_name_through_its_entry_point():
    code = ("import torch, importlib.metadata as m\n"
            "eps = m.entry_points(group='torch_dynamo_backends')\n"
            "assert 'lanejit' in eps.names, eps.names\n"
            "f = torch.compile(torch.nn.RMSNorm(64), backend='lanejit')\n"
            "x = torch.randn(3, 64)\n"
            "with torch.no_grad():\n"
            "    torch.testing.assert_close(f(x), torch.nn.RMSNorm(64)(x))\n"
            "import sys; assert 'lanejit.dynamo' in sys.modules\n")
    run_python(code)


def test_unknown_rest_option_is_a_clear_error():
    with pytest.raises(Exception, match="rest='gpu'"):
        compiled, _ = compile_recorded(lambda x: x * 2, rest="gpu")
        compiled(torch.randn(3))


ADD_ONE = """program add_one {
  in in0: f32[R, 4]
  out out0: f32[R, 4]
  %0 = load in0[0:4]
  %1 = const f32 1
  %2 = add %0, %1
  out0[0:4] = %2
}
"""
ADD_ONE_SIGNATURE = ('{"inputs": [["rows", null, false]], "options": {}, '
                     '"outputs": [[0, null, 4, false]]}')


def test_operator_compiles_a_kernel_it_has_not_seen():
    # As when Inductor loads code it cached in another process: the first
    # call of the operator compiles the kernel from its program text.
    code = ("import torch, lanejit.torch.row_op as r\n"
            f"y = torch.ops.lanejit.row_program({ADD_ONE!r}, {ADD_ONE_SIGNATURE!r}, "
            "[torch.arange(8.).reshape(2, 4)])\n"
            "assert r.compiles == 1, r.compiles\n"
            "assert torch.equal(y[0], torch.arange(8.).reshape(2, 4) + 1), y\n")
    run_python(code)


def test_operator_refuses_bad_arguments_with_messages():
    with pytest.raises(RuntimeError, match="inputs where the program has"):
        torch.ops.lanejit.row_program(ADD_ONE, ADD_ONE_SIGNATURE, [torch.ones(2, 4)] * 2)
    with pytest.raises(RuntimeError, match="cannot compile its kernel"):
        torch.ops.lanejit.row_program("program broken {", ADD_ONE_SIGNATURE, [torch.ones(2, 4)])
    with pytest.raises(RuntimeError, match="lanejit::row_program"):  # 5 columns, not 4
        torch.ops.lanejit.row_program(ADD_ONE, ADD_ONE_SIGNATURE, [torch.ones(2, 5)])


def test_in_place_update_of_an_input_is_kept_in_order():
    def f(x, buf):
        a = x * buf
        buf.add_(1)  # a KV-cache-like update Inductor keeps in the graph
        return torch.exp(a) + buf * 3
    x = torch.randn(4, 32)
    buf = torch.randn(4, 32)
    want_buf = buf.clone()
    want = f(x, want_buf)
    compiled, sink = compile_recorded(f)
    with torch.no_grad():
        got = compiled(x, buf)
    assert close(got, want) and torch.equal(buf, want_buf)
    assert kernels(sink)


@pytest.mark.parametrize("cos_shape", [(7, 16), (2, 1, 7, 16), (1, 1, 7, 16), (3, 1, 16)])
def test_inputs_broadcast_over_outer_dims(cos_shape):
    # RoPE's cos and sin against q [B, H, T, D]: the operator runs the kernel
    # once per outer index instead of copying them to rows.
    from torch_models import rope
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 3, 7, 16, generator=g)
    cos, sin = torch.randn(cos_shape, generator=g), torch.randn(cos_shape, generator=g)
    compiled, sink = compile_recorded(rope)
    with torch.no_grad():
        assert close(compiled(q, cos, sin), rope(q, cos, sin))
    assert kernels(sink)


def test_a_one_row_reduction_to_a_scalar():
    def f(x):
        return (x * 2).sum(-1) + 1  # [n] -> a 0-d result
    compiled, sink = compile_recorded(f)
    x = torch.randn(33)
    with torch.no_grad():
        assert close(compiled(x), f(x))


def test_layer_norm_and_gelu_backward_become_kernels():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(48), torch.nn.GELU(approximate="tanh"))
    reference = copy.deepcopy(model)
    compiled, sink = compile_recorded(model)
    x = torch.randn(6, 48, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    compiled(x).square().sum().backward()
    reference(x2).square().sum().backward()
    assert close(x.grad, x2.grad, 1e-4)
    for p, q in zip(model.parameters(), reference.parameters()):
        assert close(p.grad, q.grad, 1e-4)
    backward = [r for r in sink if any("tangents" in i for g in r.groups for i in g["inputs"])]
    assert backward and any("reduce.sum" in g["program"] for g in backward[0].groups)
