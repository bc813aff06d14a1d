# docs/python.md's examples run as written: every ```python block, in
# order, in one namespace.
import contextlib
import io
import os
import pathlib
import re

import pytest

DOC = pathlib.Path(os.environ.get("LANEJIT_SOURCE_DIR",
                                  pathlib.Path(__file__).resolve().parents[2])) / "docs" / "python.md"


def blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_docs_have_examples():
    assert len(blocks()) >= 6


def test_examples_run(torch):
    namespace = {}
    out = io.StringIO()
    for i, code in enumerate(blocks()):
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, f"{DOC}:block{i}", "exec"), namespace)
            except Exception as e:  # name the block that failed
                pytest.fail(f"docs/python.md block {i} failed: {e!r}\n{code}")
    # The printed error in the first section is the binder's real message.
    assert "lanejit: input 'x' must be float32, got a numpy array of float64" in out.getvalue()
