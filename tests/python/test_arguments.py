# Zero-copy arguments: the kernel reads and writes the caller's memory
# (row-strided views, in place, N-D flattening), and every argument it
# cannot take without a copy is refused with TypeError / ValueError.
import numpy as np
import pytest

import lanejit
from conftest import assert_close, make_inputs


@pytest.fixture(scope="module")
def layernorm():
    program = lanejit.library.layernorm()
    return program, lanejit.compile(program)


def ln_inputs(rows=17, cols=65, seed=1):
    return make_inputs(lanejit.library.layernorm(), rows, cols, seed)


def test_out_is_written_in_the_callers_memory(layernorm):
    program, k = layernorm
    x, g, b = ln_inputs()
    y = np.full_like(x, np.nan)
    address = y.ctypes.data
    assert k(x, g, b, out=y) is y
    assert y.ctypes.data == address
    assert_close(y, lanejit.reference(program, x, g, b))


def test_torch_out_is_written_in_the_callers_memory(torch, layernorm):
    program, k = layernorm
    x, g, b = ln_inputs()
    y = torch.full(x.shape, float("nan"))
    address = y.data_ptr()
    assert k(torch.from_numpy(x), torch.from_numpy(g), torch.from_numpy(b), out=y) is y
    assert y.data_ptr() == address
    assert_close(y.numpy(), lanejit.reference(program, x, g, b))


def test_inputs_are_read_in_place_not_copied(layernorm):
    # A view of the input: changing it through another view changes the result.
    program, k = layernorm
    x, g, b = ln_inputs()
    y1 = k(x, g, b)
    x_alias = x.view()
    x_alias[0, :] *= 3
    y2 = k(x, g, b)
    assert not np.array_equal(y1[0], y2[0])
    assert np.array_equal(y1[1:], y2[1:])


def test_row_strided_views_numpy(layernorm):
    program, k = layernorm
    big = make_inputs(program, 17, 100, seed=3)[0]
    x = big[:, :65]  # row stride 100, 65 columns
    _, g, b = ln_inputs()
    out_big = np.full((17, 80), 7.0, np.float32)
    y = out_big[:, 10:75]
    k(x, g, b, out=y)
    assert_close(y, lanejit.reference(program, np.ascontiguousarray(x), g, b))
    assert (out_big[:, :10] == 7).all() and (out_big[:, 75:] == 7).all()


def test_row_strided_views_torch(torch, layernorm):
    program, k = layernorm
    x_t = torch.from_numpy(make_inputs(program, 8, 5000, seed=4)[0])
    _, g, b = ln_inputs(cols=4096)
    g_t, b_t = torch.from_numpy(g), torch.from_numpy(b)
    y_t = torch.zeros(8, 5000)
    k(x_t[:, :4096], g_t, b_t, out=y_t[:, :4096])
    expected = lanejit.reference(program, x_t[:, :4096].contiguous().numpy(), g, b)
    assert_close(y_t[:, :4096].numpy(), expected)
    assert (y_t[:, 4096:] == 0).all()
    # Without out=, the result is a new torch tensor.
    y2 = k(x_t[:, :4096], g_t, b_t)
    assert isinstance(y2, torch.Tensor)
    assert_close(y2.numpy(), expected)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_in_place(lib, layernorm, request):
    program, k = layernorm
    x, g, b = ln_inputs(rows=9, cols=300)
    expected = lanejit.reference(program, x, g, b)
    if lib == "torch":
        torch = request.getfixturevalue("torch")
        xt = torch.from_numpy(x.copy())
        assert k(xt, torch.from_numpy(g), torch.from_numpy(b), out=xt) is xt
        assert_close(xt.numpy(), expected)
    else:
        xc = x.copy()
        assert k(xc, g, b, out=xc) is xc
        assert_close(xc, expected)


def test_leading_dimensions_flatten_into_rows(torch, layernorm):
    program, k = layernorm
    x = make_inputs(program, 2 * 3, 64, seed=5)[0].reshape(2, 3, 64)
    _, g, b = ln_inputs(cols=64)
    expected = lanejit.reference(program, x.reshape(6, 64), g, b).reshape(2, 3, 64)
    y = k(x, g, b)
    assert y.shape == (2, 3, 64)
    assert_close(y, expected)
    yt = k(torch.from_numpy(x), torch.from_numpy(g), torch.from_numpy(b))
    assert tuple(yt.shape) == (2, 3, 64)
    assert_close(yt.numpy(), expected)
    # Reference outputs keep the leading dimensions too.
    assert lanejit.reference(program, x, g, b).shape == (2, 3, 64)


def test_outputs_follow_the_input_library(torch, layernorm):
    _, k = layernorm
    x, g, b = ln_inputs()
    assert isinstance(k(x, g, b), np.ndarray)
    assert isinstance(k(torch.from_numpy(x), g, b), torch.Tensor)
    assert isinstance(k(x, torch.from_numpy(g), b), np.ndarray)  # the first array decides


def expect(error, pattern, fn, *args, **kwargs):
    with pytest.raises(error, match=pattern):
        fn(*args, **kwargs)


def test_bad_numpy_arguments(layernorm):
    _, k = layernorm
    x, g, b = ln_inputs()
    expect(TypeError, r"input 'x' must be float32, got a numpy array of float64",
           k, x.astype(np.float64), g, b)
    expect(TypeError, r"input 'gamma' must be float32", k, x, g.astype(np.float16), b)
    expect(ValueError, r"input 'x' must have unit column stride, got a stride of 2",
           k, np.zeros((17, 130), np.float32)[:, ::2], g, b)
    expect(ValueError, r"input 'gamma' must have unit stride",
           k, x, np.zeros(130, np.float32)[::2], b)
    expect(ValueError, r"input 'x' is a row tensor \[R, cols\] and must have at least 2",
           k, x[0], g, b)
    expect(ValueError, r"input 'gamma' is a column vector \[cols\] and must have 1 dimension",
           k, x, g[None, :], b)
    expect(TypeError, r"input 'x' must be a numpy array or a torch tensor of float32, got list",
           k, x.tolist(), g, b)
    expect(TypeError, r"layernorm takes 3 inputs \(x, gamma, beta\), got 2", k, x, g)
    expect(TypeError, r"only out= and threads= as keywords", k, x, g, b, y=x)
    expect(ValueError, r"output 'y' is a read-only array",
           k, x, g, b, out=np.broadcast_to(np.float32(0), x.shape))
    ro = np.zeros_like(x)
    ro.setflags(write=False)
    expect(ValueError, r"output 'y' is a read-only array", k, x, g, b, out=ro)
    expect(ValueError, r"row stride of 0", k, np.broadcast_to(x[:1], (17, 65)), g, b)
    expect(ValueError, r"do not step by whole rows",
           k, np.zeros((4, 10, 65), np.float32)[:, :5, :], g, b)
    unaligned = np.frombuffer(bytearray(4 * 17 * 65 + 1), np.uint8)[1:].view(np.float32)
    expect(ValueError, r"(not aligned|not a whole number)", k, unaligned.reshape(17, 65), g, b)


def test_shape_errors_carry_the_cpp_message(layernorm):
    _, k = layernorm
    x, g, b = ln_inputs()
    # Kernel::run's binder reports these (lanejit.Error is a ValueError).
    with pytest.raises(lanejit.Error) as e:
        k(x, g[:10], b)
    assert isinstance(e.value, ValueError)
    assert "gamma" in str(e.value)
    with pytest.raises(ValueError, match="y"):
        k(x, g, b, out=np.zeros((17, 64), np.float32))
    with pytest.raises(ValueError, match="y"):
        k(x, g, b, out=np.zeros((16, 65), np.float32))


def test_bad_torch_arguments(torch, layernorm):
    _, k = layernorm
    x, g, b = (torch.from_numpy(a) for a in ln_inputs())
    expect(TypeError, r"input 'x' must be float32, got a torch tensor of torch.float64",
           k, x.double(), g, b)
    expect(ValueError, r"input 'x' must have unit column stride", k, x.t(), g, b)
    leaf = x.clone().requires_grad_(True)
    expect(TypeError, r"input 'x' requires grad; call the kernel under torch.no_grad\(\)",
           k, leaf, g, b)
    with torch.no_grad():
        y = k(leaf, g, b)
    assert_close(y.numpy(), k(x, g, b).numpy())
    out = torch.zeros(17, 65, requires_grad=True)
    expect(TypeError, r"output 'y' requires grad", k, x, g, b, out=out)
    expect(TypeError, r"input 'x' is not a dense \(strided\) tensor", k, x.to_sparse(), g, b)
    meta = torch.empty(17, 65, device="meta")
    expect(TypeError, r"input 'x' is a non-CPU tensor", k, meta, g, b)
    if torch.cuda.is_available():  # pragma: no cover (no GPU in CI)
        expect(TypeError, r"is a cuda tensor", k, x.cuda(), g, b)


def test_compile_options():
    program = lanejit.library.rope()
    assert "FUSE_OUTPUTS" in lanejit.switch_names()
    k1 = lanejit.compile(program, lanes=4, fuse_outputs=False, SPECIALIZE_FULL_PACKETS=False)
    assert k1.stats["lanes"] == 4
    assert "FUSE_OUTPUTS=0" in k1.options
    k2 = lanejit.compile(program, lanes=8, specialize_full_packets=True, opt_level=1)
    assert k2.stats["lanes"] == 8
    inputs = make_inputs(program, 5, 34, seed=2)
    # No switch changes an output bit.
    assert np.array_equal(k1(*inputs), k2(*inputs))
    with pytest.raises(TypeError, match="unknown option 'fuse_everything'"):
        lanejit.compile(program, fuse_everything=True)
    assert np.array_equal(lanejit.compile(program, threads=4)(*inputs), k1(*inputs))
    with pytest.raises(lanejit.Error):
        lanejit.compile(program, lanes=5)


def test_empty_arrays(torch, layernorm):
    # numpy gives empty arrays arbitrary strides; nothing is addressed, so
    # they bind as dense.
    _, k = layernorm
    _, g, b = ln_inputs()
    assert k(np.zeros((0, 65), np.float32), g, b).shape == (0, 65)
    assert tuple(k(torch.zeros(2, 0, 65), torch.from_numpy(g), b).shape) == (2, 0, 65)
