# docs/torch.md's examples run as written: every ```python block, in
# order, in one namespace.
import pytest

pytest.importorskip("torch")

from doc_examples import blocks, run_blocks  # noqa: E402


def test_examples_run():
    assert len(blocks("torch.md")) >= 5
    text = run_blocks("torch.md")
    assert "lanejit.dynamo: RMSNorm: 2 graph(s), 3 lanejit kernel(s)" in text
    assert "cumsum" in text and "is not a row operation" in text
    assert "subgraph 0: 6 torch node(s) -> kernel 'rmsnorm_0'" in text
    assert "matmul is not a row operation" in text
    assert "requires grad while grad mode is on" in text
    # bf16: the kernel reads and writes bf16, the casts are among its nodes.
    assert "in in0: bf16[R, 64]" in text and "out out1: bf16[R, 64]" in text
    assert "input     in0 = primals_1 (bf16)" in text
