# Shared helpers for the Python package's tests (run by ctest; see
# tests/CMakeLists.txt). The package under test is the build tree's
# (PYTHONPATH=<build>/python), except in test_install.py.
import numpy as np
import pytest

import lanejit

EPS = 1e-5
TOL = 5e-5  # the project's oracle tolerance: |y - ref| <= atol + rtol*|ref|


def make_inputs(program, rows, cols, seed=0):
    """float32 numpy inputs for `program` at rows x cols: row tensors
    [rows, n], column vectors [n], scalars as 0-d arrays of 1e-5."""
    rng = np.random.default_rng(seed)
    arrays = []
    for name, kind, dim in program.inputs:
        if kind == "scalar":
            arrays.append(np.array(1e-5, dtype=np.float32))
            continue
        n = dim.evaluate(cols)
        shape = (rows, n) if kind == "row tensor" else (n,)
        arrays.append(rng.uniform(-2, 2, size=shape).astype(np.float32))
    return arrays


def assert_close(actual, expected, tol=TOL):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    bad = np.abs(actual - expected) > tol + tol * np.abs(expected)
    assert not bad.any(), (
        f"{bad.sum()} elements differ, worst {np.abs(actual - expected).max()}")


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch")


def library_programs():
    return [(name, lanejit.library.by_name(name)) for name in lanejit.library.names()]
