# docs/torch.md's examples run as written: every ```python block, in
# order, in one namespace.
import contextlib
import io
import os
import pathlib
import re

import pytest

pytest.importorskip("torch")

SOURCE = os.environ.get("LANEJIT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])
DOC = pathlib.Path(SOURCE) / "docs" / "torch.md"


def blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_examples_run():
    assert len(blocks()) >= 3
    namespace = {}
    out = io.StringIO()
    for i, code in enumerate(blocks()):
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, f"{DOC}:block{i}", "exec"), namespace)
            except Exception as e:  # name the block that failed
                pytest.fail(f"docs/torch.md block {i} failed: {e!r}\n{code}")
    text = out.getvalue()
    assert "subgraph 0: 6 torch node(s) -> kernel 'rmsnorm_0'" in text
    assert "matmul is not a row operation" in text
    assert "cumsum is not a row operation" in text
    assert "requires grad while grad mode is on" in text
