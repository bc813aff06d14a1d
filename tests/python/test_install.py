# `cmake --install` into a temporary prefix (never /usr/local: the suite
# needs no root and leaves nothing behind), then use what it installed the
# way a user would: a C++ project with find_package, and Python importing
# the package from a directory outside the repository.
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

BUILD = pathlib.Path(os.environ.get("LANEJIT_BUILD_DIR", ""))
PY_DIR = os.environ.get("LANEJIT_PYTHON_INSTALL_DIR", "")
HERE = pathlib.Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(not (BUILD / "CMakeCache.txt").exists() or not PY_DIR,
                                reason="needs LANEJIT_BUILD_DIR and LANEJIT_PYTHON_INSTALL_DIR "
                                       "(set by ctest)")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", str(BUILD), "--prefix", str(p)])
    yield p
    shutil.rmtree(p, ignore_errors=True)


def test_layout(prefix):
    lib = prefix / "lib"
    so = sorted(x.name for x in lib.glob("liblanejit.so*"))
    assert so == ["liblanejit.so", "liblanejit.so.0.1", "liblanejit.so.0.1.0"], so
    soname = run(["objdump", "-p", str(lib / "liblanejit.so.0.1.0")])
    assert "SONAME               liblanejit.so.0.1" in soname
    assert (prefix / "include" / "lanejit" / "kernel.h").exists()
    assert (prefix / "bin" / "lanejit").exists()
    config = lib / "cmake" / "lanejit"
    assert (config / "lanejitConfig.cmake").exists()
    # LLVM is private: the exported target names no LLVM target or header.
    targets = "".join(p.read_text() for p in config.glob("lanejitTargets*.cmake"))
    assert "LLVM" not in targets and "llvm" not in targets
    for header in (prefix / "include" / "lanejit").iterdir():
        assert "#include <llvm" not in header.read_text(), header
    assert (prefix / PY_DIR / "lanejit" / "__init__.py").exists()


def test_cli_runs(prefix):
    out = run([str(prefix / "bin" / "lanejit"), "explain", "lib:rope"])
    assert "rope" in out


def test_cmake_consumer(prefix, tmp_path):
    src, build = tmp_path / "src", tmp_path / "build"
    shutil.copytree(HERE / "consumer", src)
    run(["cmake", "-S", str(src), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", str(build)])
    assert run([str(build / "app")]).strip() == "ok"


def test_python_package_from_outside_the_repo(prefix, tmp_path):
    script = """
import numpy as np, torch, lanejit
assert lanejit.__file__.startswith(PREFIX), lanejit.__file__
k = lanejit.compile(lanejit.library.layernorm())
x = torch.randn(17, 65); g = torch.ones(65); b = torch.zeros(65)
y = torch.empty(17, 65)
p = y.data_ptr()
assert k(x, g, b, out=y) is y and y.data_ptr() == p
ref = lanejit.reference(k.program, x.numpy(), g.numpy(), b.numpy())
assert np.abs(y.numpy() - ref).max() < 1e-4
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=str(prefix / PY_DIR))
    out = run([sys.executable, "-c", f"PREFIX = {str(prefix)!r}\n" + script], cwd=tmp_path,
              env=env)
    assert out.strip() == "ok"
