#!/usr/bin/env python3
"""What a Python call of a lanejit kernel costs (a benchmark, not a test).

For each small seed case (17x65; RoPE 17x66), in paired rounds, every
contender is timed on the same torch tensors in one process, in a shuffled
order per round:

  native   the native entry, arguments bound once, called in a C++ loop
           (lanejit._lanejit._time_native): the floor
  run      Kernel::run from a C++ loop (the checked C++ call)
  py-out   k(x, ..., out=y) from a Python loop, torch tensors
  py-new   k(x, ...) from a Python loop, allocating the output tensor
  torch    torch eager's own call (F.layer_norm etc.), from a Python loop

A Python loop's time includes the loop's own ~20-30 ns per iteration; the
C++ loops do not. Printed: per contender the median over rounds of the
per-call mean; then per round the paired differences py-out - native and
py-new - native (median [min-max]) and py-out / torch, with how many rounds
lanejit's Python call beat torch.

  PYTHONPATH=build/python .venv/bin/python python/bench/overhead.py [--rounds 200] [--calls 200] [--case layernorm]
Run it with PYTHONPATH=build/python for the build tree's package.
"""
import argparse
import random
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import lanejit
from lanejit import _lanejit

EPS = 1e-5


def torch_call(name, x, others):
    """torch eager's equivalent of each library program, as a model calls it."""
    if name == "layernorm":
        g, b = others
        return lambda: F.layer_norm(x, (x.shape[1],), g, b, eps=EPS)
    if name == "rmsnorm":
        (g,) = others
        return lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * g
    if name == "swiglu":
        (u,) = others
        return lambda: F.silu(x) * u
    if name == "gelu_residual":
        (u,) = others
        return lambda: F.gelu(x, approximate="tanh") + u
    if name == "masked_softmax":
        r, c = x.shape
        masked = torch.arange(c)[None, :] > (torch.arange(r) % c)[:, None]
        return lambda: torch.softmax(x.masked_fill(masked, float("-inf")), dim=-1)
    if name == "rope":
        cos, sin = others
        h = x.shape[1] // 2

        def rope():
            x1, x2 = x[:, :h], x[:, h:]
            return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
        return rope
    raise ValueError(name)


def python_loop(fn, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls


def inputs_for(program, rows, cols, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _name, kind, dim in program.inputs:
        n = dim.evaluate(cols)
        shape = (rows, n) if kind == "row tensor" else (n,)
        out.append(torch.from_numpy(rng.uniform(-2, 2, size=shape).astype(np.float32)))
    return out


def run_case(name, rounds, calls):
    program = lanejit.library.by_name(name)
    rows, cols = (17, 66) if name == "rope" else (17, 65)
    k = lanejit.compile(program)
    args = inputs_for(program, rows, cols, seed=1)
    y = torch.empty(rows, cols)
    contenders = {
        "native": lambda: _lanejit._time_native(k, calls, y, *args) * 1e9,
        "run": lambda: _lanejit._time_run(k, calls, y, *args) * 1e9,
        "py-out": lambda: python_loop(lambda: k(*args, out=y), calls),
        "py-new": lambda: python_loop(lambda: k(*args), calls),
        "torch": lambda: python_loop(torch_call(name, args[0], args[1:]), calls),
    }
    with torch.no_grad():
        for fn in contenders.values():  # warm up: caches, allocator, branch predictors
            fn()
        samples = {c: [] for c in contenders}
        for _ in range(rounds):
            order = list(contenders)
            random.shuffle(order)
            for c in order:
                samples[c].append(contenders[c]())

    def spread(values):
        return (f"{statistics.median(values):7.0f} ns "
                f"[{min(values):.0f}-{max(values):.0f}]")

    print(f"\n{name} {rows}x{cols}: {rounds} rounds x {calls} calls, per-call means")
    for c, values in samples.items():
        print(f"  {c:7s} {spread(values)}")
    out_over = [p - n for p, n in zip(samples["py-out"], samples["native"])]
    new_over = [p - n for p, n in zip(samples["py-new"], samples["native"])]
    ratio = [p / t for p, t in zip(samples["py-out"], samples["torch"])]
    ratio_new = [p / t for p, t in zip(samples["py-new"], samples["torch"])]
    wins = sum(p < t for p, t in zip(samples["py-out"], samples["torch"]))
    wins_new = sum(p < t for p, t in zip(samples["py-new"], samples["torch"]))
    print(f"  py-out - native  {spread(out_over)}")
    print(f"  py-new - native  {spread(new_over)}")
    print(f"  py-out / torch   {statistics.median(ratio):.3f} "
          f"[{min(ratio):.3f}-{max(ratio):.3f}], faster in {wins}/{rounds} rounds")
    print(f"  py-new / torch   {statistics.median(ratio_new):.3f} "
          f"[{min(ratio_new):.3f}-{max(ratio_new):.3f}], faster in {wins_new}/{rounds} rounds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--case", action="append",
                        help="library program(s); default: all six")
    a = parser.parse_args()
    torch.set_num_threads(1)  # lanejit runs on the calling thread
    print(f"lanejit {lanejit.__version__} from {lanejit.__file__}; torch {torch.__version__}, "
          f"1 thread")
    for name in a.case or lanejit.library.names():
        run_case(name, a.rounds, a.calls)


if __name__ == "__main__":
    main()
