# Programs from Python (builder DSL with operators, text form, library) and
# the compiled kernel's reports: explain, dump, inspect, aot.
import os
import subprocess

import numpy as np
import pytest

import lanejit
from conftest import assert_close, make_inputs


def layernorm_dsl():
    b = lanejit.Builder("layernorm")
    x, gamma, beta = b.rows("x"), b.columns("gamma"), b.columns("beta")
    d = x - lanejit.mean(x)
    b.output("y", d * lanejit.rsqrt(lanejit.mean(d * d) + 1e-5) * gamma + beta)
    return b.build()


def test_dsl_layernorm_matches_the_library():
    program = layernorm_dsl()
    inputs = make_inputs(program, 17, 65)
    y = lanejit.compile(program)(*inputs)
    assert_close(y, lanejit.reference(lanejit.library.layernorm(), *inputs))


def test_text_round_trip():
    for name in lanejit.library.names():
        program = lanejit.library.by_name(name)
        text = lanejit.print(program)
        assert str(program) == text
        again = lanejit.parse(text)
        assert again.hash() == program.hash()
        assert lanejit.print(again) == text


def test_parse_errors_name_line_and_column():
    with pytest.raises(lanejit.Error, match=r"^prog.lj:2:"):
        lanejit.parse("program p {\n  bogus\n}\n", "prog.lj")


def test_operators_slices_and_select():
    # RoPE written with slices, and a masked softmax with select.
    b = lanejit.Builder("rope")
    x = b.rows("x")
    cos = b.rows("cos", lanejit.C / 2)
    sin = b.rows("sin", lanejit.C / 2)
    h = lanejit.C / 2
    x1, x2 = x[0:h], x[:, h:]
    b.write("y", 0, x1 * cos - x2 * sin)
    b.write("y", h, x1 * sin + x2 * cos)
    rope = b.build()
    inputs = make_inputs(rope, 5, 34)
    assert_close(lanejit.compile(rope)(*inputs), lanejit.reference(lanejit.library.rope(), *inputs))

    b = lanejit.Builder("masked_softmax")
    x = b.rows("x")
    keep = lanejit.col() <= lanejit.row() % lanejit.dim(lanejit.C)
    m = lanejit.rowmax(lanejit.select(keep, x, float("-inf")))
    e = lanejit.select(keep, lanejit.exp(x - m), 0.0)
    b.output("y", e / lanejit.sum(e))
    softmax = b.build()
    x = make_inputs(softmax, 9, 7)[0]
    assert np.array_equal(lanejit.compile(softmax)(x),
                          lanejit.compile(lanejit.library.masked_softmax())(x))


def test_numbers_on_either_side_and_unary_functions():
    b = lanejit.Builder("mix")
    x = b.rows("x")
    y = (1.0 - x) * 2 + x / 4.0 - (-x)
    y = lanejit.maximum(y, 0.5) + lanejit.minimum(1.0, lanejit.abs(x)) + lanejit.sigmoid(x)
    y = y + lanejit.tanh(x) + lanejit.sqrt(lanejit.abs(x)) + lanejit.log(lanejit.abs(x) + 1)
    y = lanejit.select((x > 0) & ~(x > 1) | lanejit.eq(x, 0.25), y, lanejit.fma(x, 2.0, 1.0))
    b.output("y", y)
    program = b.build()
    x = make_inputs(program, 3, 50)[0]
    assert_close(lanejit.compile(program)(x), lanejit.reference(program, x))
    with pytest.raises(TypeError, match="no truth value"):
        bool(x_expr := b.rows("z"))  # noqa: F841
    with pytest.raises(lanejit.Error):  # the C++ verifier's message
        lanejit.exp(lanejit.row())


def test_dims():
    C = lanejit.C
    assert str(C / 2) == "C/2"
    assert str(C - 1) == "C-1"
    assert (3 * C / 4).evaluate(8) == 6
    assert (C / 2).evaluate(7) is None
    assert lanejit.Dim(5) == 5


def test_explain_dump_inspect():
    k = lanejit.compile(lanejit.library.rope(), lanes=8)
    report = k.explain()
    assert isinstance(report, dict)
    assert report["mapping"]["lanes"] == 8
    assert str(report) == report.text and "rope" in report.text
    assert "define" in k.dump("llvm")
    assert isinstance(k.dump("object"), bytes) and k.dump("object")[:4] == b"\x7fELF"
    assert "program rope" in k.dump("ir")
    with pytest.raises(lanejit.Error):
        k.dump("nonsense")
    inspected = k.inspect()
    assert isinstance(inspected, dict) and inspected["functions"]
    assert "functions" in str(inspected) or len(str(inspected)) > 0


def test_aot_writes_object_and_header(tmp_path):
    k = lanejit.compile(lanejit.library.swiglu())
    obj, header = tmp_path / "swiglu.o", tmp_path / "swiglu.h"
    entry = k.aot(str(obj), header=str(header))
    assert obj.read_bytes()[:4] == b"\x7fELF"
    assert entry in header.read_text()
    nm = subprocess.run(["nm", str(obj)], capture_output=True, text=True)
    if nm.returncode == 0:
        assert entry in nm.stdout
    with pytest.raises(OSError, match="not a directory"):
        k.aot(str(tmp_path / "missing" / "x.o"))
    assert sorted(os.listdir(tmp_path)) == ["swiglu.h", "swiglu.o"]  # no temporaries left


def test_a_kernel_for_aarch64_is_written_out_not_run(tmp_path):
    k = lanejit.compile(lanejit.library.rmsnorm(), target_triple="aarch64-linux-gnu",
                        target_cpu="apple-m1")
    x = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(lanejit.Error, match="compiled for aarch64"):
        k(x, np.ones(8, dtype=np.float32))
    obj = tmp_path / "rmsnorm.o"
    k.aot(str(obj), header=str(tmp_path / "rmsnorm.h"))
    data = obj.read_bytes()
    assert data[:4] == b"\x7fELF"
    assert int.from_bytes(data[18:20], "little") == 183  # e_machine: EM_AARCH64
    with pytest.raises(lanejit.Error, match="unknown target CPU"):
        lanejit.compile(lanejit.library.rmsnorm(), target_triple="aarch64-linux-gnu",
                        target_cpu="znver4")
