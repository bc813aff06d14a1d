# Kernels called from many Python threads at once, and compiles racing
# with calls: the GIL is released in both, results must be exact.
import sys
import threading
import time

import numpy as np

import lanejit
from conftest import make_inputs


def test_many_threads_share_a_kernel_and_compile():
    program = lanejit.library.layernorm()
    kernel = lanejit.compile(program)
    inputs = [make_inputs(program, 33, 257, seed=s) for s in range(8)]
    expected = [kernel(*args) for args in inputs]
    failures = []
    start = threading.Barrier(8)

    def worker(i):
        try:
            start.wait()
            out = np.empty_like(expected[i])
            for round_ in range(200):
                kernel(*inputs[i], out=out)
                if not np.array_equal(out, expected[i]):
                    failures.append((i, round_))
                    return
                if round_ % 50 == 0:  # compiles (mostly cache hits) race with calls
                    other = lanejit.compile(lanejit.library.by_name(
                        lanejit.library.names()[i % 6]), lanes=4 << (i % 3))
                    assert other.stats["lanes"] == 4 << (i % 3)
        except BaseException as e:  # reported below, with the thread's index
            failures.append((i, repr(e)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)  # "must not hang"
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_gil_is_released_while_a_kernel_runs():
    # With a switch interval far longer than the test, a thread gives up the
    # GIL only when it blocks or C++ releases it. The main thread can then
    # see the worker between "started" and "finished" of one call only if
    # the call released the GIL (otherwise it runs after the worker ends).
    program = lanejit.library.gelu_residual()
    kernel = lanejit.compile(program)
    x, u = make_inputs(program, 500, 4096, seed=9)
    out = np.empty_like(x)
    state = {"started": 0, "finished": 0}

    def worker():
        for _ in range(20):
            state["started"] += 1
            kernel(x, u, out=out)
            state["finished"] += 1

    seen_inside = False
    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        while t.is_alive() and not seen_inside:
            time.sleep(0.0005)
            seen_inside = state["started"] > state["finished"]
        t.join(timeout=120)
    finally:
        sys.setswitchinterval(old)
    assert seen_inside


def test_threads_keyword_gives_the_same_bits():
    program = lanejit.library.rmsnorm()
    args = make_inputs(program, 200, 4097, seed=3)
    one = lanejit.compile(program, threads=1)(*args)
    for t in (1, 2, 3, 8):
        assert np.array_equal(lanejit.compile(program)(*args, threads=t), one)
        assert np.array_equal(lanejit.compile(program, threads=t)(*args), one)


def test_bad_thread_counts_are_clear_errors():
    import pytest
    program = lanejit.library.rmsnorm()
    args = make_inputs(program, 2, 8, seed=3)
    with pytest.raises(ValueError, match="thread count must be at least 1"):
        lanejit.compile(program)(*args, threads=0)
    with pytest.raises(Exception, match=r"\[1, 256\]"):
        lanejit.compile(program, threads=-1)
