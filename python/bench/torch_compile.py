"""lanejit.torch.trace against eager torch and Inductor, through Python (docs/torch.md).

The six seed operators written the usual PyTorch way (tests/python/
torch_models.py) at the seed shapes (17x65 and 1024x4097; RoPE 17x66 and
1024x4098), and a Llama-style decoder block, on one thread: torch.set_num_threads
(--threads) and the kernels compiled with the same threads= (lanejit would
otherwise use every CPU of its affinity for large calls).
For each case three variants are visited in paired rounds in one run:
eager, lanejit (lanejit.torch.trace) and inductor-py (torch.compile with
Inductor as shipped, dynamic=False: the compiled callable as a Python user
calls it, its wrapper included), the rounds cycling through all six orders. A visit: a short
warmup, then batches of calls sized to last >= --visit-ms; its value is the
median of 5 batches (time per call). Reported: each variant's median over
rounds and the median of the per-round ratios eager/lanejit and
inductor-py/lanejit, each with its [min-max] and lanejit's win count (not a confidence interval, and not the ratio of
the displayed times). Both variants allocate their outputs on every call,
as a user's call does, and run under torch.no_grad(). Outputs are checked
against eager at atol = rtol = 5e-5 before timing.

glibc returns large freed blocks to the kernel, so a call that allocates a
16 MB output then pays ~4000 page faults, which on a shared machine cost
more than the compute. The script re-executes itself with glibc's
MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_/MALLOC_TOP_PAD_ raised, so
both variants reuse freed memory as a long-running process's allocator does
(--keep-malloc to measure without).

    PYTHONPATH=build/python .venv/bin/python python/bench/torch_compile.py
"""

import argparse
import itertools
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "python"))
import lanejit.torch as ljt  # noqa: E402
from torch_models import DecoderBlock, fixture, seed_cases  # noqa: E402


def per_call(fn, args, n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter_ns() - t0) / n


def visit(fn, args, visit_ns):
    n = 1
    per_call(fn, args, 3)
    while per_call(fn, args, n) * n < visit_ns:
        n *= 2
    return statistics.median(per_call(fn, args, n) for _ in range(5))


def fmt(ns):
    return f"{ns / 1e3:.2f} us" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def cases(block_rows):
    out = []
    for rows, cols in ((17, 65), (1024, 4097)):
        for name, fn, args in seed_cases(rows, cols):
            c = args[0].shape[-1]
            out.append((f"{name} {rows}x{c}", fn, args))
    torch.manual_seed(0)
    block = DecoderBlock(c=512, heads=8, hidden=1376).eval()
    x = fixture((1, block_rows, 512))
    cos = fixture((block_rows, 64), 1.0, 0.013, torch.cos)
    sin = fixture((block_rows, 64), 1.0, 0.013, torch.sin)
    out.append((f"decoder block 1x{block_rows}x512", block, (x, cos, sin)))
    return out


_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "68719476736",
           "MALLOC_TOP_PAD_": "268435456"}


def main():
    if "--keep-malloc" not in sys.argv and any(k not in os.environ for k in _MALLOC):
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **_MALLOC})
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keep-malloc", action="store_true", help="glibc's default malloc settings")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--visit-ms", type=float, default=20)
    p.add_argument("--block-rows", type=int, default=128)
    p.add_argument("--only", default="", help="run cases whose name contains this")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for both torch and the lanejit kernels (compile's threads=)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s) for torch and "
          f"lanejit, "
          f"ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', '(default)')}, "
          f"malloc {'default' if a.keep_malloc else 'keeps freed memory'}, "
          f"load average {os.getloadavg()[0]:.2f}")
    rows = []
    orders = list(itertools.permutations(("eager", "lanejit", "inductor-py")))
    with torch.no_grad():
        for name, fn, args in cases(a.block_rows):
            if a.only not in name:
                continue
            torch._dynamo.reset()
            variants = {"eager": fn, "lanejit": ljt.trace(fn, threads=a.threads),
                        "inductor-py": torch.compile(fn, dynamic=False)}
            want = fn(*args)
            for v in ("lanejit", "inductor-py"):
                got = variants[v](*args)
                err = (got.double() - want.double()).abs()
                assert bool((err <= 5e-5 + 5e-5 * want.double().abs()).all()), (name, v)
            kernels = len(ljt.explain(variants["lanejit"], *args).groups)
            times = {v: [] for v in variants}
            ratios = {"eager": [], "inductor-py": []}  # other / lanejit, per round
            for r in range(a.rounds):
                t = {}
                for v in orders[r % len(orders)]:
                    t[v] = visit(variants[v], args, a.visit_ms * 1e6)
                    times[v].append(t[v])
                for v in ratios:
                    ratios[v].append(t[v] / t["lanejit"])
            row = {"name": name, "kernels": kernels,
                   **{v: statistics.median(times[v]) for v in variants}}
            for v, rs in ratios.items():
                row[v + " ratio"] = (statistics.median(rs), min(rs), max(rs),
                                     sum(x > 1 for x in rs))
            rows.append(row)
            print(f"{name:<28} kernels {kernels}  eager {fmt(row['eager']):>10}  "
                  f"inductor-py {fmt(row['inductor-py']):>10}  lanejit {fmt(row['lanejit']):>10}  "
                  + "  ".join(f"{v}/lanejit {m:.2f}x [{lo:.2f}-{hi:.2f}] {w}/{a.rounds}"
                              for v in ratios
                              for m, lo, hi, w in [row[v + " ratio"]]), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("\n| case | kernels | eager | inductor-py | lanejit.torch | eager / lanejit "
          "| inductor-py / lanejit |")
    print("|---|---:|---:|---:|---:|---|---|")
    for row in rows:
        cells = [f"{m:.2f}× [{lo:.2f}–{hi:.2f}] {w}/{a.rounds}"
                 for v in ("eager", "inductor-py") for m, lo, hi, w in [row[v + " ratio"]]]
        print(f"| {row['name']} | {row['kernels']} | {fmt(row['eager'])} | "
              f"{fmt(row['inductor-py'])} | {fmt(row['lanejit'])} | {cells[0]} | {cells[1]} |")

if __name__ == "__main__":
    main()
