# The six library programs called from numpy and from torch, checked against
# the FP64 reference evaluator and against torch's own functions.
import numpy as np
import pytest

import lanejit
from conftest import EPS, assert_close, make_inputs

NAMES = ["rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual", "masked_softmax"]
SHAPES = [(17, 66), (4, 128), (3, 1000), (1, 2)]


def test_library_names():
    assert sorted(lanejit.library.names()) == sorted(NAMES)
    for name in NAMES:
        assert getattr(lanejit.library, name)().name == lanejit.library.by_name(name).name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rows,cols", SHAPES)
def test_numpy_against_reference(name, rows, cols):
    program = lanejit.library.by_name(name)
    kernel = lanejit.compile(program)
    inputs = make_inputs(program, rows, cols, seed=rows * cols)
    y = kernel(*inputs)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (rows, cols)
    ref = lanejit.reference(program, *inputs)
    assert ref.dtype == np.float64 and ref.shape == (rows, cols)
    assert_close(y, ref)


def torch_expected(torch, name, x, others):
    F = torch.nn.functional
    if name == "rope":
        cos, sin = others
        h = x.shape[1] // 2
        x1, x2 = x[:, :h], x[:, h:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=1)
    if name == "layernorm":
        gamma, beta = others
        return F.layer_norm(x, (x.shape[1],), gamma, beta, eps=EPS)
    if name == "swiglu":
        return F.silu(x) * others[0]
    if name == "rmsnorm":
        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + EPS) * others[0]
    if name == "gelu_residual":
        return F.gelu(x, approximate="tanh") + others[0]
    if name == "masked_softmax":
        r, c = x.shape
        keep = torch.arange(c)[None, :] <= (torch.arange(r) % c)[:, None]
        return torch.softmax(x.masked_fill(~keep, float("-inf")), dim=1)
    raise AssertionError(name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rows,cols", SHAPES)
def test_torch_against_torch_and_reference(torch, name, rows, cols):
    program = lanejit.library.by_name(name)
    kernel = lanejit.compile(program)
    arrays = make_inputs(program, rows, cols, seed=7 + cols)
    tensors = [torch.from_numpy(a) for a in arrays]
    y = kernel(*tensors)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    assert tuple(y.shape) == (rows, cols)
    assert_close(y.numpy(), lanejit.reference(program, *arrays))
    expected = torch_expected(torch, name, tensors[0], tensors[1:])
    assert_close(y.numpy(), expected.numpy(), tol=2e-4)
    if name == "masked_softmax":  # the masked columns are exactly zero
        keep = np.arange(cols)[None, :] <= (np.arange(rows) % cols)[:, None]
        assert (y.numpy()[~keep] == 0).all()


def test_scalar_inputs_from_numbers_and_0d():
    b = lanejit.Builder("scale")
    x = b.rows("x")
    s = b.scalar("s")
    b.output("y", x * s + 1.0)
    program = b.build()
    kernel = lanejit.compile(program)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for s in (2.5, 2, np.array(2.5, dtype=np.float32), np.float32(2.5), np.float64(2)):
        y = kernel(x, s)
        assert_close(y, x * float(s) + 1.0)
    assert_close(lanejit.reference(program, x, 0.5), x * 0.5 + 1)


def test_multiple_outputs_return_a_tuple():
    b = lanejit.Builder("two")
    x = b.rows("x")
    b.output("a", x * 2.0)
    b.output("b", -x)
    program = b.build()
    kernel = lanejit.compile(program)
    x = np.ones((2, 5), np.float32)
    a, neg = kernel(x)
    assert_close(a, 2 * x)
    assert_close(neg, -x)
    ra, rb = lanejit.reference(program, x)
    assert_close(ra, 2 * x)
    out = (np.zeros_like(x), np.zeros_like(x))
    assert kernel(x, out=out) is out
    assert_close(out[1], -x)
