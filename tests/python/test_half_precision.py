# bf16 and f16 buffers from Python (docs/element-types.md, docs/python.md):
# numpy float16 and ml_dtypes.bfloat16 arrays, torch.float16 and
# torch.bfloat16 tensors, all passed by pointer; outputs allocated in the
# declared type; a buffer of another type is refused, never converted.
import subprocess
import sys

import numpy as np
import pytest

import lanejit
from conftest import make_inputs

ml_dtypes = pytest.importorskip("ml_dtypes")

NUMPY_TYPE = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}
# The smallest normal exponent and the fraction bits of each type.
MIN_EXP = {"bf16": -126, "f16": -14}
FRACTION = {"bf16": 7, "f16": 10}


def ulp(values, dtype):
    """One unit in the last place of `dtype` at each value (floored at the
    type's smallest normal exponent), as the C++ checks allow."""
    e = np.floor(np.log2(np.maximum(np.abs(values), 2.0 ** MIN_EXP[dtype])))
    return 2.0 ** (e - FRACTION[dtype])


def assert_close_to(actual, expected, dtype, tol=5e-5):
    """The project's tolerance (atol = rtol = 5e-5) plus one unit in the
    last place of the stored type."""
    actual = np.asarray(actual, np.float64)
    assert actual.shape == expected.shape
    bad = np.abs(actual - expected) > tol + tol * np.abs(expected) + ulp(expected, dtype)
    assert not bad.any(), (
        f"{bad.sum()} of {bad.size} elements differ, worst "
        f"{np.abs(actual - expected).max()}")


def stored(values, dtype):
    """float32 values rounded into a numpy array of `dtype` (nearest-even)."""
    return np.asarray(values, np.float32).astype(NUMPY_TYPE[dtype])


def to_torch(torch, array):
    """The same memory as a torch tensor (bf16 through an int16 view)."""
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def bits(a):
    """The stored 16-bit patterns of a numpy array or a torch tensor."""
    if isinstance(a, np.ndarray):
        return a.view(np.int16)
    import torch
    return a.view(torch.int16).numpy()


def torch_type(torch, dtype):
    return {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]


# Independent float64 definitions of the library operators (docs/library.md),
# from the inputs as stored.
def rope(x, cos, sin):
    h = x.shape[1] // 2
    x1, x2 = x[:, :h], x[:, h:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=1)


def layernorm(x, gamma, beta):
    d = x - x.mean(axis=1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5) * gamma + beta


def swiglu(x, u):
    return x / (1 + np.exp(-x)) * u


def rmsnorm(x, gamma):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * gamma


def gelu_residual(x, u):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3))) + u


def masked_softmax(x):
    rows, cols = x.shape
    keep = np.arange(cols)[None, :] <= (np.arange(rows) % cols)[:, None]
    m = np.where(keep, x, -np.inf).max(axis=1, keepdims=True)
    e = np.where(keep, np.exp(x - m), 0.0)
    return e / e.sum(axis=1, keepdims=True)


FLOAT64 = {"rope": rope, "layernorm": layernorm, "swiglu": swiglu, "rmsnorm": rmsnorm,
           "gelu_residual": gelu_residual, "masked_softmax": masked_softmax}


@pytest.fixture(scope="module", params=["bf16", "f16"])
def dtype(request):
    return request.param


_kernels = {}


def kernel(name, dtype):
    if (name, dtype) not in _kernels:
        program = lanejit.with_storage(lanejit.library.by_name(name), dtype)
        _kernels[name, dtype] = program, lanejit.compile(program)
    return _kernels[name, dtype]


def inputs(program, dtype, rows=17, cols=66, seed=0):
    return [stored(a, dtype) for a in make_inputs(program, rows, cols, seed)]


def test_with_storage_retypes_every_buffer(dtype):
    program = lanejit.with_storage(lanejit.library.layernorm(), dtype)
    assert program.input_dtypes == [dtype] * 3 and program.output_dtypes == [dtype]
    assert lanejit.library.layernorm().input_dtypes == ["f32"] * 3
    assert f"in x: {dtype}[R, C]" in str(program)
    with pytest.raises(lanejit.Error, match="buffers hold f32, bf16, f16 or i8"):
        lanejit.with_storage(program, "f64")


@pytest.mark.parametrize("name", sorted(FLOAT64))
@pytest.mark.parametrize("shape", [(17, 66), (5, 1024), (3, 8)])
def test_library_ops_numpy_and_torch(torch, name, dtype, shape):
    program, k = kernel(name, dtype)
    xs = inputs(program, dtype, *shape, seed=sum(shape))
    y = k(*xs)
    assert isinstance(y, np.ndarray) and y.dtype == NUMPY_TYPE[dtype] and y.shape == shape
    yt = k(*(to_torch(torch, a) for a in xs))
    assert isinstance(yt, torch.Tensor) and yt.dtype == torch_type(torch, dtype)
    assert np.array_equal(bits(yt), bits(y))  # torch and numpy: the same bits
    wide = [a.astype(np.float64) for a in xs]
    assert_close_to(y, FLOAT64[name](*wide), dtype)
    assert_close_to(y, lanejit.reference(program, *xs), dtype)  # the FP64 oracle agrees


def test_out_writes_the_callers_memory(torch, dtype):
    program, k = kernel("rmsnorm", dtype)
    xs = inputs(program, dtype, seed=3)
    y = np.full((17, 66), np.nan, NUMPY_TYPE[dtype])
    address = y.ctypes.data
    assert k(*xs, out=y) is y and y.ctypes.data == address
    assert np.array_equal(bits(y), bits(k(*xs)))
    yt = torch.full((17, 66), float("nan"), dtype=torch_type(torch, dtype))
    address = yt.data_ptr()
    assert k(*(to_torch(torch, a) for a in xs), out=yt) is yt and yt.data_ptr() == address
    assert np.array_equal(bits(yt), bits(y))


def test_inputs_are_read_in_place(torch, dtype):
    program, k = kernel("swiglu", dtype)
    x, u = inputs(program, dtype, seed=4)
    xt = to_torch(torch, x)
    before = bits(k(xt, to_torch(torch, u))).copy()
    x[0, :] = stored(np.full(66, 3.0), dtype)  # seen through the tensor: shared memory
    after = bits(k(xt, to_torch(torch, u)))
    assert not np.array_equal(before[0], after[0])
    assert np.array_equal(before[1:], after[1:])


def test_row_strided_views(torch, dtype):
    program, k = kernel("layernorm", dtype)
    big = stored(np.random.default_rng(5).uniform(-2, 2, (17, 100)), dtype)
    x = big[:, :65]  # row stride 100 elements, 200 bytes
    _, g, b = inputs(program, dtype, cols=65, seed=5)
    expected = k(np.ascontiguousarray(x), g, b)
    sentinel = stored(np.full((17, 80), 7.0), dtype)
    k(x, g, b, out=sentinel[:, 10:75])
    assert np.array_equal(bits(sentinel[:, 10:75]), bits(expected))
    assert (sentinel[:, :10].astype(np.float32) == 7).all()
    assert (sentinel[:, 75:].astype(np.float32) == 7).all()
    # The same views of torch tensors.
    bt = to_torch(torch, big)
    out = torch.zeros(17, 80, dtype=torch_type(torch, dtype))
    k(bt[:, :65], to_torch(torch, g), to_torch(torch, b), out=out[:, 10:75])
    assert np.array_equal(bits(out[:, 10:75].contiguous()), bits(expected))
    assert (out[:, :10] == 0).all() and (out[:, 75:] == 0).all()
    # B x T x C: leading dimensions become rows, and allocated outputs keep them.
    x3 = stored(np.random.default_rng(6).uniform(-2, 2, (2, 4, 65)), dtype)
    y3 = k(x3, g, b)
    assert y3.shape == (2, 4, 65) and y3.dtype == NUMPY_TYPE[dtype]
    assert np.array_equal(bits(y3).reshape(8, 65), bits(k(x3.reshape(8, 65), g, b)))
    yt3 = k(to_torch(torch, x3), to_torch(torch, g), to_torch(torch, b))
    assert tuple(yt3.shape) == (2, 4, 65) and np.array_equal(bits(yt3), bits(y3))


def test_in_place(torch, dtype):
    program, k = kernel("rmsnorm", dtype)
    x, g = inputs(program, dtype, seed=7)
    expected = bits(k(x, g)).copy()
    assert k(x, g, out=x) is x
    assert np.array_equal(bits(x), expected)


def test_mixed_types_round_once():
    # f32 in, bf16 and f16 out: each output is the f32 result rounded once,
    # to nearest-even, as numpy's (and ml_dtypes') own conversion rounds.
    b = lanejit.Builder("rms_mixed")
    x, g = b.rows("x"), b.columns("gamma")
    y = x * (1.0 / lanejit.sqrt(lanejit.mean(x * x) + 1e-5)) * g
    b.output("y32", y)
    b.output("ybf", y, dtype="bf16")
    b.output("yf16", y, dtype="f16")
    program = b.build()
    assert program.output_dtypes == ["f32", "bf16", "f16"]
    k = lanejit.compile(program)
    xs = make_inputs(program, 33, 129, seed=8)
    y32, ybf, yf16 = k(*xs)
    assert y32.dtype == np.float32 and ybf.dtype == ml_dtypes.bfloat16
    assert yf16.dtype == np.float16
    assert np.array_equal(bits(ybf), bits(y32.astype(ml_dtypes.bfloat16)))
    assert np.array_equal(bits(yf16), bits(y32.astype(np.float16)))


def test_python_number_scalars_are_rounded_to_the_declared_type(dtype):
    b = lanejit.Builder("scale")
    x = b.rows("x", dtype=dtype)
    b.output("y", x * b.scalar("s", dtype=dtype))
    k = lanejit.compile(b.build())
    x = stored(np.linspace(-2, 2, 3 * 16).reshape(3, 16), dtype)
    y = k(x, 0.1)
    assert y.dtype == np.float32  # the output is declared f32
    s = np.float32(np.float32(0.1).astype(NUMPY_TYPE[dtype]))  # 0.1 as stored, widened
    assert np.array_equal(y, x.astype(np.float32) * s)
    assert np.array_equal(y, k(x, np.array(0.1, np.float32).astype(NUMPY_TYPE[dtype])))


def expect(error, pattern, fn, *args, **kwargs):
    with pytest.raises(error, match=pattern):
        fn(*args, **kwargs)


def test_a_buffer_of_another_type_is_refused(torch):
    pb, kb = kernel("rmsnorm", "bf16")
    ph, kh = kernel("rmsnorm", "f16")
    k32 = lanejit.compile(lanejit.library.rmsnorm())
    x32, g32 = make_inputs(k32.program, 17, 66)
    xb, gb = stored(x32, "bf16"), stored(g32, "bf16")
    xh, gh = stored(x32, "f16"), stored(g32, "f16")
    expect(TypeError, r"input 'x' must be bfloat16, got a numpy array of float32", kb, x32, gb)
    expect(TypeError, r"input 'gamma' must be bfloat16, got a numpy array of float16",
           kb, xb, gh)
    expect(TypeError, r"input 'x' must be bfloat16, got a numpy array of uint16",
           kb, xb.view(np.uint16), gb)
    expect(TypeError, r"input 'x' must be float16, got a numpy array of bfloat16", kh, xb, gh)
    expect(TypeError, r"input 'x' must be float16, got a numpy array of >f2",
           kh, xh.astype(">f2"), gh)
    expect(TypeError, r"input 'x' must be float32, got a numpy array of bfloat16",
           k32, xb, g32)
    expect(TypeError, r"output 'y' must be bfloat16, got a numpy array of float32",
           kb, xb, gb, out=np.empty((17, 66), np.float32))
    expect(TypeError, r"input 'x' must be a numpy array or a torch tensor of bfloat16, got list",
           kb, x32.tolist(), gb)
    t = lambda a: to_torch(torch, a)  # noqa: E731
    expect(TypeError, r"input 'x' must be float32, got a torch tensor of torch.bfloat16",
           k32, t(xb), t(g32))
    expect(TypeError, r"input 'x' must be bfloat16, got a torch tensor of torch.float32",
           kb, t(x32), t(gb))
    expect(TypeError, r"input 'gamma' must be bfloat16, got a torch tensor of torch.float16",
           kb, t(xb), t(gh))
    expect(TypeError, r"output 'y' must be float16, got a torch tensor of torch.bfloat16",
           kh, t(xh), t(gh), out=torch.empty(17, 66, dtype=torch.bfloat16))
    # Layout checks count elements of the buffer's own type.
    expect(ValueError, r"input 'x' must have unit column stride, got a stride of 2 elements",
           kb, stored(np.zeros((17, 132)), "bf16")[:, ::2], gb)
    raw = np.frombuffer(bytearray(2 * 17 * 66 + 1), np.uint8)[1:]
    expect(ValueError, r"input 'x' is not aligned to 2 bytes",
           kh, raw.view(np.float16).reshape(17, 66), gh)


def test_reference_reads_stored_inputs(dtype):
    program, _ = kernel("swiglu", dtype)
    x, u = inputs(program, dtype, seed=9)
    ref = lanejit.reference(program, x, u)
    assert ref.dtype == np.float64
    wide = x.astype(np.float64), u.astype(np.float64)
    assert np.allclose(ref, swiglu(*wide), rtol=1e-6, atol=1e-6)


WITHOUT_ML_DTYPES = r"""
import sys
sys.modules["ml_dtypes"] = None        # as if it were not installed
import numpy as np, torch, lanejit
k16 = lanejit.compile(lanejit.with_storage(lanejit.library.rmsnorm(), "f16"))
x, g = np.ones((3, 8), np.float16), np.ones(8, np.float16)
assert k16(x, g).dtype == np.float16       # numpy float16 needs nothing more
kb = lanejit.compile(lanejit.with_storage(lanejit.library.rmsnorm(), "bf16"))
xt, gt = torch.ones(3, 8, dtype=torch.bfloat16), torch.ones(8, dtype=torch.bfloat16)
assert kb(xt, gt).dtype == torch.bfloat16   # torch bf16 needs nothing more
try:
    kb(x.view(np.uint16), g.view(np.uint16))
except TypeError as e:
    print("input:", e)
b = lanejit.Builder("to_bf16")
b.output("y", b.rows("x"), dtype="bf16")
try:
    lanejit.compile(b.build())(np.ones((3, 8), np.float32))
except ImportError as e:
    print("output:", e)
"""


def test_without_ml_dtypes_bf16_numpy_arrays_are_unavailable():
    r = subprocess.run([sys.executable, "-c", WITHOUT_ML_DTYPES], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert ("input: lanejit: input 'x' must be bfloat16, got a numpy array of uint16 "
            "(numpy bfloat16 arrays need the ml_dtypes package, which is not installed; "
            "or pass a torch.bfloat16 tensor)") in r.stdout
    assert "output: lanejit: output 'y' is bf16: a numpy bfloat16 array needs the ml_dtypes " \
           "package, which is not installed" in r.stdout
