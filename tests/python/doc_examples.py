# The ```python blocks of a page in docs/, run as written: in order, in one
# namespace, with what they print captured (test_docs.py, test_torch_docs.py).
import contextlib
import io
import os
import pathlib
import re

import pytest

SOURCE = pathlib.Path(os.environ.get("LANEJIT_SOURCE_DIR",
                                     pathlib.Path(__file__).resolve().parents[2]))


def blocks(page):
    text = (SOURCE / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run_blocks(page):
    """Runs every block of docs/`page`; returns what they printed."""
    namespace = {}
    out = io.StringIO()
    for i, code in enumerate(blocks(page)):
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, f"docs/{page}:block{i}", "exec"), namespace)
            except Exception as e:  # name the block that failed
                pytest.fail(f"docs/{page} block {i} failed: {e!r}\n{code}")
    return out.getvalue()
