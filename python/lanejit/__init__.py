"""lanejit: a JIT compiler for per-row LLM operators (docs/python.md).

    import lanejit
    k = lanejit.compile(lanejit.library.layernorm())
    y = k(x, gamma, beta)            # numpy in -> numpy out, torch in -> torch out
    k(x, gamma, beta, out=y)         # into the caller's buffer, no copy
    print(k.explain())               # the compile report

The compiled module (_lanejit) does the work; this file adds the
pure-Python conveniences: reports as dicts that print as text, and aot().
"""

import json as _json
import os as _os
import tempfile as _tempfile

from . import _lanejit
from ._lanejit import (  # noqa: F401  (re-exported API)
    C, Builder, Dim, Error, Expr, Kernel, Program, abs, col, compile, constant,
    constant_i32, dim, eq, erf, exp, fma, groupmax, groupmean, groupmin, groupsum, library,
    log, logical_not, maximum, mean, minimum, ne, parse, parse_file, reference, repeat, row,
    rowmax, rowmin, rsqrt, select, sigmoid, sqrt, sum, switch_names, tanh, tof32, toi32,
    with_storage)

# print() shadows the builtin inside this module, so bind it last and only
# as an attribute: lanejit.print(program).
print = _lanejit.print  # noqa: A001

__version__ = "0.1.0"


class Report(dict):
    """A report as a dict (its JSON form); str() and print() give the text form."""

    def __init__(self, text, json_text):
        super().__init__(_json.loads(json_text))
        self.text = text

    def __str__(self):
        return self.text


def _explain(self):
    """What the compiler realized for this kernel (docs/architecture.md, the
    compile report): a dict of mapping, passes, traversals, aliasing and
    counts; printing it shows the text form."""
    return Report(self._report_text(), self._report_json())


def _inspect(self):
    """Metrics read from the machine code the JIT linked (docs/inspect.md)."""
    return Report(*self._inspect())


def _write_whole(path, data):
    # Whole or not at all: a temporary file in the same directory, renamed.
    directory = _os.path.dirname(_os.path.abspath(path))
    fd, tmp = _tempfile.mkstemp(dir=directory, prefix=".lanejit-")
    try:
        with _os.fdopen(fd, "wb") as f:
            f.write(data)
        _os.replace(tmp, path)
    except BaseException:
        _os.unlink(tmp)
        raise


def _aot(self, path, header=None):
    """Writes the kernel's object file to `path` (and a C header for its
    entry to `header`) to link without LLVM (docs/aot.md). Returns the
    entry symbol. Every output path is checked before anything is written."""
    paths = [p for p in (path, header) if p is not None]
    for p in paths:
        directory = _os.path.dirname(_os.path.abspath(p))
        if not _os.path.isdir(directory):
            raise OSError(f"lanejit: cannot write {p}: {directory} is not a directory")
        if _os.path.isdir(p):
            raise OSError(f"lanejit: cannot write {p}: it is a directory")
    if header is not None and _os.path.abspath(header) == _os.path.abspath(path):
        raise ValueError("lanejit: the object and the header need different paths")
    obj, text, entry, _imports = self._aot()
    _write_whole(path, obj)
    if header is not None:
        _write_whole(header, text.encode())
    return entry


Kernel.explain = _explain
Kernel.inspect = _inspect
Kernel.aot = _aot

__all__ = [
    "C", "Builder", "Dim", "Error", "Expr", "Kernel", "Program", "Report", "abs", "col",
    "compile", "constant", "constant_i32", "dim", "eq", "erf", "exp", "fma", "groupmax",
    "groupmean", "groupmin", "groupsum", "library", "log", "logical_not", "maximum", "mean",
    "minimum", "ne", "parse", "parse_file", "reference", "repeat", "row", "rowmax", "rowmin",
    "rsqrt", "select", "sigmoid", "sqrt", "sum", "switch_names", "tanh", "tof32", "toi32",
    "with_storage",
]
