# i8 buffers from Python (docs/element-types.md, docs/python.md): numpy
# int8 arrays and torch.int8 tensors passed by pointer, outputs allocated as
# int8, any other type refused; the quantizing library entries (per row and
# per block of 32, ggml's Q8_0) against a float64 definition, quantize_rows
# and quantize_blocks on a Python Builder, the group and repeat functions,
# and dequantization.
import numpy as np
import pytest

import lanejit
from conftest import assert_close, make_inputs

TOL = 5e-5  # the project's tolerance, for the f32 scales


def to_i8(values):
    """The definition of an i8 store (roundToI8) in float64: nearest-even,
    saturated to +-127, NaN as 0."""
    v = np.asarray(values, np.float64)
    return np.where(np.isnan(v), 0, np.clip(np.rint(np.nan_to_num(v)), -127, 127)).astype(np.int8)


def quantize64(y):
    """Per-row symmetric quantization in float64: (values, scale [R, 1])."""
    y = np.asarray(y, np.float64)
    absmax = np.abs(y).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(absmax == 0, 0.0, y * (127.0 / absmax))
    return to_i8(q), absmax / 127.0


def rmsnorm64(x, gamma):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * gamma


def assert_quantized(q, scale, y64):
    """Values within one step of the float64 quantization, scales within the
    project's tolerance (NaN where the reference is NaN)."""
    want_q, want_scale = quantize64(y64)
    assert q.dtype == np.int8 and q.shape == want_q.shape
    assert scale.dtype == np.float32 and scale.shape == want_scale.shape
    step = np.abs(q.astype(np.int16) - want_q.astype(np.int16))
    assert step.max() <= 1, f"{(step > 1).sum()} values more than one step off"
    assert (q != -128).all()  # symmetric: -128 never stored
    s = scale.astype(np.float64)
    assert np.array_equal(np.isnan(s), np.isnan(want_scale))
    ok = np.isnan(want_scale) | (np.abs(s - want_scale) <= TOL + TOL * np.abs(want_scale))
    assert ok.all(), f"scale off by {np.nanmax(np.abs(s - want_scale))}"


_kernels = {}


def kernel(program):
    key = program.hash()
    if key not in _kernels:
        _kernels[key] = lanejit.compile(program)
    return _kernels[key]


def dequantize_program():
    b = lanejit.Builder("dequantize")
    q = b.rows("q", dtype="i8")
    scale = lanejit.rowmax(b.rows("scale", 1))  # [R, 1] as a row-uniform value
    b.output("y", q * scale)
    return b.build()


def test_builder_declares_i8_buffers():
    b = lanejit.Builder("i8_all")
    x, g, s = b.rows("x", dtype="i8"), b.columns("g", dtype="i8"), b.scalar("s", dtype="i8")
    b.output("y", x * g * s, dtype="i8")
    b.write("z", 0, x + 1.0, dtype="i8")
    program = b.build()
    assert program.input_dtypes == ["i8"] * 3 and program.output_dtypes == ["i8", "i8"]
    text = str(program)
    assert "in x: i8[R, C]" in text and "out y: i8[R, C]" in text
    # (Text, not hash: a parsed scalar's unused cols differ from the builder's.)
    assert lanejit.print(lanejit.parse(text)) == text
    # with_storage retypes the floating-point buffers only, and cannot make i8 ones.
    stored = lanejit.with_storage(lanejit.library.quantize_q8(), "bf16")
    assert stored.input_dtypes == ["bf16"] and stored.output_dtypes == ["i8", "bf16"]
    with pytest.raises(lanejit.Error, match="cannot hold its buffers as i8"):
        lanejit.with_storage(program, "i8")
    with pytest.raises(lanejit.Error, match="buffers hold f32, bf16, f16 or i8"):
        lanejit.Builder("bad").rows("x", dtype="int8")


def test_stores_round_to_nearest_even_and_saturate(torch):
    b = lanejit.Builder("to_i8")
    b.output("y", b.rows("x"), dtype="i8")
    k = kernel(b.build())
    halves = np.arange(-130, 131) + 0.5
    special = [np.nan, -np.nan, np.inf, -np.inf, 127.49, 127.5, -127.5, -128, 1e30, -0.0,
               0.49999997, np.nextafter(np.float32(0.5), 1)]
    x = np.concatenate([halves, halves - 0.25, halves + 0.25, special]).astype(np.float32)
    x = x.reshape(1, -1)
    y = k(x)
    assert y.dtype == np.int8 and np.array_equal(y, to_i8(x))
    yt = k(torch.from_numpy(x))
    assert yt.dtype == torch.int8 and np.array_equal(yt.numpy(), y)


def test_loads_widen_exactly(torch):
    b = lanejit.Builder("from_i8")
    b.output("y", b.rows("q", dtype="i8"))
    k = kernel(b.build())
    q = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)  # every pattern, -128 too
    y = k(q)
    assert y.dtype == np.float32 and np.array_equal(y, q.astype(np.float32))
    assert np.array_equal(k(torch.from_numpy(q)).numpy(), y)
    assert np.array_equal(lanejit.reference(k.program, q), q.astype(np.float64))


def test_numpy_zero_copy():
    k = kernel(dequantize_program())
    rng = np.random.default_rng(1)
    q = rng.integers(-127, 128, (17, 66), dtype=np.int8)
    scale = rng.uniform(0.01, 0.1, (17, 1)).astype(np.float32)
    y = np.full((17, 66), np.nan, np.float32)
    assert k(q, scale, out=y) is y
    q[3, :] = 5  # read in place: the next call sees the write
    assert np.array_equal(k(q, scale)[3], np.float32(5) * np.repeat(scale[3], 66))
    # i8 output into the caller's int8 array.
    kq = kernel(lanejit.library.quantize_q8())
    x = rng.standard_normal((17, 66), dtype=np.float32)
    out_q, out_s = np.full((17, 66), -128, np.int8), np.full((17, 1), np.nan, np.float32)
    address = out_q.ctypes.data
    got = kq(x, out=(out_q, out_s))
    assert got[0] is out_q and got[1] is out_s and out_q.ctypes.data == address
    want_q, want_s = kq(x)
    assert want_q.dtype == np.int8 and np.array_equal(out_q, want_q)
    assert np.array_equal(out_s, want_s)
    # Row-strided int8 views (strides count int8 elements, i.e. bytes) and B x T x C.
    big = np.full((17, 100), 9, np.int8)
    kq(x, out=(big[:, 10:76], out_s))
    assert np.array_equal(big[:, 10:76], want_q) and (big[:, :10] == 9).all()
    assert (big[:, 76:] == 9).all()
    assert np.array_equal(k(big[:, 10:76], scale), k(want_q, scale))
    q3, s3 = kq(x.reshape(1, 17, 66))
    assert q3.shape == (1, 17, 66) and q3.dtype == np.int8 and s3.shape == (1, 17, 1)
    assert np.array_equal(q3[0], want_q)


def test_torch_zero_copy(torch):
    kq = kernel(lanejit.library.quantize_q8())
    k = kernel(dequantize_program())
    x = np.random.default_rng(2).standard_normal((9, 40), dtype=np.float32)
    q, s = kq(torch.from_numpy(x))
    assert q.dtype == torch.int8 and s.dtype == torch.float32 and tuple(q.shape) == (9, 40)
    want_q, want_s = kq(x)
    assert np.array_equal(q.numpy(), want_q) and np.array_equal(s.numpy(), want_s)
    out_q = torch.full((9, 40), -128, dtype=torch.int8)
    out_s = torch.empty(9, 1)
    address = out_q.data_ptr()
    got = kq(torch.from_numpy(x), out=(out_q, out_s))
    assert got[0] is out_q and out_q.data_ptr() == address
    assert np.array_equal(out_q.numpy(), want_q)
    y = k(out_q, out_s)  # an int8 tensor as an input
    assert y.dtype == torch.float32
    out_q[0] = 3  # shared memory: the kernel reads the tensor's bytes
    assert (k(out_q, out_s)[0] == 3 * out_s[0]).all()
    # A row-strided int8 view.
    wide = torch.zeros(9, 64, dtype=torch.int8)
    kq(torch.from_numpy(x), out=(wide[:, 4:44], out_s))
    assert np.array_equal(wide[:, 4:44].numpy(), want_q) and (wide[:, :4] == 0).all()


def expect(error, pattern, fn, *args, **kwargs):
    with pytest.raises(error, match=pattern):
        fn(*args, **kwargs)


def test_a_buffer_of_another_type_is_refused(torch):
    k = kernel(dequantize_program())
    kq = kernel(lanejit.library.quantize_q8())
    q = np.zeros((4, 8), np.int8)
    s = np.ones((4, 1), np.float32)
    x = np.ones((4, 8), np.float32)
    expect(TypeError, r"input 'q' must be int8, got a numpy array of float32",
           k, q.astype(np.float32), s)
    expect(TypeError, r"input 'q' must be int8, got a numpy array of uint8", k, q.view(np.uint8), s)
    expect(TypeError, r"input 'q' must be int8, got a numpy array of int16",
           k, q.astype(np.int16), s)
    expect(TypeError, r"input 'scale' must be float32, got a numpy array of int8", k, q, q[:, :1])
    expect(TypeError, r"input 'x' must be float32, got a numpy array of int8", kq, q)
    expect(TypeError, r"output 'q' must be int8, got a numpy array of float32",
           kq, x, out=(x.copy(), s.copy()))
    expect(TypeError, r"output 'q' must be int8, got a numpy array of uint8",
           kq, x, out=(q.view(np.uint8), s.copy()))
    expect(TypeError, r"input 'q' must be a numpy array or a torch tensor of int8, got list",
           k, q.tolist(), s)
    t = torch.from_numpy
    expect(TypeError, r"input 'q' must be int8, got a torch tensor of torch.float32",
           k, t(x), t(s))
    expect(TypeError, r"input 'q' must be int8, got a torch tensor of torch.uint8",
           k, t(q.view(np.uint8)), t(s))
    expect(TypeError, r"input 'x' must be float32, got a torch tensor of torch.int8", kq, t(q))
    expect(TypeError, r"output 'q' must be int8, got a torch tensor of torch.float32",
           kq, t(x), out=(t(x.copy()), t(s.copy())))
    expect(ValueError, r"input 'q' must have unit column stride, got a stride of 2 elements",
           k, np.zeros((4, 16), np.int8)[:, ::2], s)


def test_python_number_scalars_are_rounded_to_i8():
    b = lanejit.Builder("scale_i8")
    x = b.rows("x")
    b.output("y", x * b.scalar("s", dtype="i8"))
    k = kernel(b.build())
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8)
    for number, stored in [(2.5, 2), (3.5, 4), (-1000, -127), (float("nan"), 0)]:
        assert np.array_equal(k(x, number), x * np.float32(stored)), number
    assert np.array_equal(k(x, np.array(7, np.int8)), x * np.float32(7))


@pytest.mark.parametrize("rows,cols", [(17, 66), (5, 1024), (3, 8), (1, 1)])
def test_quantize_q8_against_float64(torch, rows, cols):
    program = lanejit.library.quantize_q8()
    assert program.input_dtypes == ["f32"] and program.output_dtypes == ["i8", "f32"]
    k = kernel(program)
    x = np.random.default_rng(rows * cols).uniform(-3, 3, (rows, cols)).astype(np.float32)
    q, scale = k(x)
    assert scale.shape == (rows, 1)
    assert_quantized(q, scale, x)
    # Bit for bit the f32 definition: 127 / max|x| rounded once, times x, stored as i8.
    inverse = np.float32(127) / np.abs(x).max(axis=1, keepdims=True)
    assert np.array_equal(q, to_i8(x * inverse))
    qt, st = k(torch.from_numpy(x))
    assert np.array_equal(qt.numpy(), q) and np.array_equal(st.numpy(), scale)


@pytest.mark.parametrize("rows,cols", [(17, 66), (4, 1000), (2, 3)])
def test_rmsnorm_q8_against_float64(rows, cols):
    program = lanejit.library.rmsnorm_q8()
    assert [n for n, _, _ in program.inputs] == ["x", "gamma"]
    k = kernel(program)
    x, gamma = make_inputs(program, rows, cols, seed=rows + cols)
    q, scale = k(x, gamma)
    assert_quantized(q, scale, rmsnorm64(x, gamma))
    # The same f32 y as the rmsnorm kernel's, quantized in the same pass.
    y = kernel(lanejit.library.rmsnorm())(x, gamma)
    q2, scale2 = kernel(lanejit.library.quantize_q8())(y)
    assert np.array_equal(q, q2) and np.array_equal(scale, scale2)


def test_special_rows():
    k = kernel(lanejit.library.quantize_q8())
    x = np.random.default_rng(3).standard_normal((6, 37)).astype(np.float32)
    x[0] = 0.0  # a zero row: values 0, scale 0
    x[1, 5] = np.nan  # a NaN in the row: every value 0, scale NaN
    x[2] = np.nan
    x[3, 7] = np.inf  # an infinite max: finite values 0 (x * 0), inf * 0 is NaN -> 0
    x[4, :] = -0.0
    q, scale = k(x)
    for r in (0, 4):
        assert (q[r] == 0).all() and scale[r, 0] == 0
    for r in (1, 2):
        assert (q[r] == 0).all() and np.isnan(scale[r, 0])
    assert (q[3] == 0).all() and scale[3, 0] == np.inf
    assert_quantized(q[5:], scale[5:], x[5:])
    want_q, want_s = quantize64(x)
    assert np.array_equal(q[:3], want_q[:3]) and np.array_equal(np.isnan(scale), np.isnan(want_s))


def test_library_lists_the_quantizing_entries():
    assert lanejit.library.quantizing() == [
        "quantize_q8", "rmsnorm_q8", "quantize_q8_0", "rmsnorm_q8_0"]
    assert len(lanejit.library.names()) == 6  # names() stays the six operators
    for name in lanejit.library.quantizing():
        assert lanejit.library.by_name(name).hash() == getattr(lanejit.library, name)().hash()
    with pytest.raises(lanejit.Error, match="known: .*quantize_q8, rmsnorm_q8"):
        lanejit.library.by_name("quantize_q4")


def test_quantize_rows_builds_the_library_programs():
    # quantize_rows is the C++ library::quantizeRows: the same program, hash for hash.
    b = lanejit.Builder("quantize_q8")
    lanejit.library.quantize_rows(b, b.rows("x"))
    assert b.build().hash() == lanejit.library.quantize_q8().hash()
    b = lanejit.Builder("rmsnorm_q8")
    x, gamma = b.rows("x"), b.columns("gamma")
    lanejit.library.quantize_rows(b, x * (1.0 / lanejit.sqrt(lanejit.mean(x * x) + 1e-5)) * gamma)
    assert b.build().hash() == lanejit.library.rmsnorm_q8().hash()


def test_quantize_rows_after_a_builder_program(torch):
    # LayerNorm, its f32 output kept, quantized in the same pass into named outputs.
    b = lanejit.Builder("layernorm_q8")
    x, g, beta = b.rows("x"), b.columns("gamma"), b.columns("beta")
    d = x - lanejit.mean(x)
    y = d * lanejit.rsqrt(lanejit.mean(d * d) + 1e-5) * g + beta
    b.output("y", y)
    lanejit.library.quantize_rows(b, y, values="codes", scales="codes_scale")
    program = b.build()
    assert [n for n, _ in program.outputs] == ["y", "codes", "codes_scale"]
    assert program.output_dtypes == ["f32", "i8", "f32"]
    k = kernel(program)
    xs = make_inputs(program, 17, 65, seed=11)
    y32, codes, scale = k(*xs)
    want_q, want_s = kernel(lanejit.library.quantize_q8())(y32)
    assert np.array_equal(codes, want_q) and np.array_equal(scale, want_s)
    ref_y, _, _ = lanejit.reference(program, *xs)
    assert_quantized(codes, scale, ref_y)
    yt, codes_t, scale_t = k(*(torch.from_numpy(a) for a in xs))
    assert codes_t.dtype == torch.int8 and np.array_equal(codes_t.numpy(), codes)
    # A Python number is not an expression to quantize.
    with pytest.raises(TypeError):
        lanejit.library.quantize_rows(lanejit.Builder("b"), 1.0)


def test_dequantize_is_exact(torch):
    kq = kernel(lanejit.library.rmsnorm_q8())
    k = kernel(dequantize_program())
    x, gamma = make_inputs(kq.program, 33, 130, seed=12)
    q, scale = kq(x, gamma)
    y = k(q, scale)
    assert y.dtype == np.float32
    assert np.array_equal(y, q.astype(np.float32) * scale)  # one f32 product per element
    ref = lanejit.reference(k.program, q, scale)  # the oracle reads i8 as stored
    assert np.array_equal(ref, q.astype(np.float64) * scale.astype(np.float64))
    yt = k(torch.from_numpy(q), torch.from_numpy(scale))
    assert np.array_equal(yt.numpy(), y)
    # Dequantized values are within half a step of rmsnorm's, plus the tolerance.
    y64 = rmsnorm64(x, gamma)
    assert (np.abs(y - y64) <= 0.5 * scale * (1 + 1e-3) + 1e-6).all()


# Q8_0: i8 values and f16 scales per block of 32 columns.
BLOCK = 32


def quantize_blocks64(y, block=BLOCK):
    """Per-block symmetric quantization in float64: (values, exact scale
    [R, C/block] in float64, before the f16 store)."""
    y = np.asarray(y, np.float64)
    rows, cols = y.shape
    absmax = np.abs(y).reshape(rows, cols // block, block).max(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = np.where(absmax == 0, 0.0, 127.0 / absmax)
    return to_i8(y * np.repeat(inverse, block, axis=1)), absmax / 127.0


def assert_block_quantized(q, scale, y64, block=BLOCK):
    """Values within one step of the float64 quantization; scales stored as
    float16 within the project's tolerance plus one float16 step of the
    exact value (the f32 quotient is rounded again on the f16 store)."""
    want_q, want_scale = quantize_blocks64(y64, block)
    assert q.dtype == np.int8 and q.shape == want_q.shape
    assert scale.dtype == np.float16 and scale.shape == want_scale.shape
    step = np.abs(q.astype(np.int16) - want_q.astype(np.int16))
    assert step.max() <= 1, f"{(step > 1).sum()} values more than one step off"
    assert (q != -128).all()
    s = scale.astype(np.float64)
    ulp = np.spacing(np.abs(want_scale).astype(np.float16)).astype(np.float64)
    bad = np.abs(s - want_scale) > TOL + TOL * np.abs(want_scale) + ulp
    assert not bad.any(), f"{bad.sum()} scales off, worst {np.abs(s - want_scale).max()}"


def quantize_blocks32(x, block=BLOCK):
    """The entry's f32 definition, bit for bit: 127 / max|x[block]| rounded
    once (0 for a zero block), times x, stored as i8; max / 127 in f32,
    stored as f16."""
    rows, cols = x.shape
    absmax = np.abs(x).reshape(rows, cols // block, block).max(axis=2)
    with np.errstate(divide="ignore"):
        inverse = np.where(absmax == 0, np.float32(0), np.float32(127) / absmax)
    q = to_i8(x * np.repeat(inverse.astype(np.float32), block, axis=1))
    return q, (absmax / np.float32(127)).astype(np.float16)


@pytest.mark.parametrize("rows,cols", [(17, 64), (5, 1024), (3, 32), (2, 4096)])
def test_quantize_q8_0_against_float64(torch, rows, cols):
    program = lanejit.library.quantize_q8_0()
    assert program.input_dtypes == ["f32"] and program.output_dtypes == ["i8", "f16"]
    k = kernel(program)
    x = np.random.default_rng(rows + cols).uniform(-3, 3, (rows, cols)).astype(np.float32)
    x[0, :BLOCK] = 0.0  # a zero block: values 0, scale 0
    if cols > BLOCK:
        x[-1, BLOCK:2 * BLOCK] *= np.float32(1e-3)  # one block much smaller than the rest
    q, scale = k(x)
    assert scale.shape == (rows, cols // BLOCK)
    assert (q[0, :BLOCK] == 0).all() and scale[0, 0] == 0
    assert_block_quantized(q, scale, x)
    want_q, want_scale = quantize_blocks32(x)
    assert np.array_equal(q, want_q) and np.array_equal(scale, want_scale)
    qt, st = k(torch.from_numpy(x))
    assert qt.dtype == torch.int8 and st.dtype == torch.float16
    assert np.array_equal(qt.numpy(), q) and np.array_equal(st.numpy(), scale)


@pytest.mark.parametrize("rows,cols", [(17, 64), (4, 1024), (2, 32)])
def test_rmsnorm_q8_0_against_float64(rows, cols):
    program = lanejit.library.rmsnorm_q8_0()
    assert [n for n, _, _ in program.inputs] == ["x", "gamma"]
    assert program.output_dtypes == ["i8", "f16"]
    k = kernel(program)
    x, gamma = make_inputs(program, rows, cols, seed=rows * cols)
    gamma[:BLOCK] = 0.0  # every row's first block is zero
    q, scale = k(x, gamma)
    assert (q[:, :BLOCK] == 0).all() and (scale[:, 0] == 0).all()
    assert_block_quantized(q, scale, rmsnorm64(x, gamma))
    # The rmsnorm kernel's f32 y, quantized in the same pass.
    y = kernel(lanejit.library.rmsnorm())(x, gamma)
    q2, scale2 = kernel(lanejit.library.quantize_q8_0())(y)
    assert np.array_equal(q, q2) and np.array_equal(scale, scale2)


def test_q8_0_columns_not_a_multiple_of_the_block(torch):
    k = kernel(lanejit.library.quantize_q8_0())
    for cols in (40, 31, 1):
        x = np.ones((3, cols), np.float32)
        with pytest.raises(lanejit.Error, match=f"C/32 is not an integer for C = {cols}"):
            k(x)
        with pytest.raises(ValueError):  # lanejit.Error is a ValueError, as for any bad shape
            k(torch.from_numpy(x))


def test_quantize_blocks_builds_the_library_programs():
    # quantize_blocks is the C++ library::quantizeBlocks: the same program, hash for hash.
    b = lanejit.Builder("quantize_q8_0")
    lanejit.library.quantize_blocks(b, b.rows("x"))
    assert b.build().hash() == lanejit.library.quantize_q8_0().hash()
    b = lanejit.Builder("rmsnorm_q8_0")
    x, gamma = b.rows("x"), b.columns("gamma")
    y = x * (1.0 / lanejit.sqrt(lanejit.mean(x * x) + 1e-5)) * gamma
    lanejit.library.quantize_blocks(b, y, values="q", scales="scale", block=32)
    assert b.build().hash() == lanejit.library.rmsnorm_q8_0().hash()
    # Another block size is another program.
    b = lanejit.Builder("quantize_q8_0")
    lanejit.library.quantize_blocks(b, b.rows("x"), block=64)
    assert b.build().hash() != lanejit.library.quantize_q8_0().hash()


def test_quantize_blocks_after_a_builder_program(torch):
    b = lanejit.Builder("layernorm_q8_0")
    x, g, beta = b.rows("x"), b.columns("gamma"), b.columns("beta")
    d = x - lanejit.mean(x)
    y = d * lanejit.rsqrt(lanejit.mean(d * d) + 1e-5) * g + beta
    b.output("y", y)
    lanejit.library.quantize_blocks(b, y, values="codes", scales="codes_scale", block=16)
    program = b.build()
    assert [n for n, _ in program.outputs] == ["y", "codes", "codes_scale"]
    assert program.output_dtypes == ["f32", "i8", "f16"]
    k = kernel(program)
    xs = make_inputs(program, 17, 96, seed=13)
    y32, codes, scale = k(*xs)
    assert scale.shape == (17, 6)
    want_q, want_s = quantize_blocks32(y32, block=16)
    assert np.array_equal(codes, want_q) and np.array_equal(scale, want_s)
    ref_y, _, _ = lanejit.reference(program, *xs)
    assert_block_quantized(codes, scale, ref_y, block=16)
    _, codes_t, scale_t = k(*(torch.from_numpy(a) for a in xs))
    assert np.array_equal(codes_t.numpy(), codes) and np.array_equal(scale_t.numpy(), scale)
    with pytest.raises(TypeError):
        lanejit.library.quantize_blocks(lanejit.Builder("b"), 1.0)


def group_program(g):
    b = lanejit.Builder("groups")
    x = b.rows("x")
    b.output("sum", lanejit.groupsum(x, g))
    b.output("mean", lanejit.groupmean(x, g))
    b.output("max", lanejit.groupmax(x, g))
    b.output("min", lanejit.groupmin(x, g))
    # Each column minus its group's max, and the upper half of a repeat.
    b.output("centered", x - lanejit.repeat(lanejit.groupmax(x, g), g))
    b.output("upper", lanejit.repeat(lanejit.groupsum(x, g), g)[:, lanejit.C / 2:])
    return b.build()


@pytest.mark.parametrize("g", [1, 4, 8, 32])
def test_group_reductions_and_repeat_match_numpy(g):
    program = group_program(g)
    assert [c for _, c in program.outputs][:1] == [lanejit.C / g]
    x = np.random.default_rng(g).uniform(-2, 2, (5, 128)).astype(np.float32)
    blocks = x.reshape(5, 128 // g, g)
    running = np.zeros((5, 128 // g), np.float32)
    for i in range(g):  # each run combined left to right, in f32
        running = running + blocks[:, :, i]
    outs = {n: v for (n, _), v in zip(program.outputs, kernel(program)(x))}
    assert np.array_equal(outs["sum"], running)
    assert_close(outs["mean"], blocks.astype(np.float64).mean(axis=2))
    assert np.array_equal(outs["max"], blocks.max(axis=2))
    assert np.array_equal(outs["min"], blocks.min(axis=2))
    assert np.array_equal(outs["centered"], x - np.repeat(blocks.max(axis=2), g, axis=1))
    assert np.array_equal(outs["upper"], np.repeat(running, g, axis=1)[:, 64:])
    # No lane count changes a bit (each run is summed in column order).
    narrow = lanejit.compile(program, lanes=4)(x)
    for got, want in zip(narrow, outs.values()):
        assert np.array_equal(got, want)


def test_group_arguments_are_checked():
    b = lanejit.Builder("bad")
    x, s = b.rows("x"), b.scalar("s")
    with pytest.raises(lanejit.Error, match="row-uniform"):
        lanejit.groupsum(s, 4)
    with pytest.raises(lanejit.Error, match="group of 0 columns"):
        lanejit.groupmax(x, 0)
    with pytest.raises(TypeError):
        lanejit.repeat(x, 2.5)
    b = lanejit.Builder("groups")
    b.output("y", lanejit.groupsum(b.rows("x"), 8))
    with pytest.raises(lanejit.Error, match="C/8 is not an integer for C = 12"):
        kernel(b.build())(np.ones((2, 12), np.float32))
