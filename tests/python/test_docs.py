# docs/python.md's examples run as written: every ```python block, in
# order, in one namespace.
from doc_examples import blocks, run_blocks


def test_docs_have_examples():
    assert len(blocks("python.md")) >= 6


def test_examples_run(torch):
    text = run_blocks("python.md")
    # The printed error in the first section is the binder's real message.
    assert "lanejit: input 'x' must be float32, got a numpy array of float64" in text
    assert "lanejit: input 'x' must be bfloat16, got a numpy array of float32" in text
    assert "lanejit: input 'x' must be float32, got a numpy array of int8" in text
