"""eager, torch.compile() (Inductor) and backend="lanejit" on a Llama-style
decoder block (docs/torch.md, "Speed against Inductor").

Cases, at 1 and 2 threads (torch.set_num_threads, which Inductor's OpenMP
kernels follow, and lanejit's threads= option): the block's forward under
no_grad at seq 1 and 128, its training step at seq 128 (forward, loss,
backward, SGD step), and the block's row-program parts alone (RMSNorm,
RoPE, causal softmax, SwiGLU at the block's shapes, forward) so the
kernels lanejit makes are compared with Inductor's for the same subgraphs.
Inductor runs as shipped (torch.compile's defaults; its configuration is
printed). Shapes are static (Dynamo's default for a first compile).

Protocol: the variants of a case are visited in rounds whose orders cover
every permutation (3 variants: 6 orders, repeated); a visit is a warmup
then batches of calls that last >= --visit-ms, its value the median of 5
batches (time per call). Reported: each variant's median over rounds and,
for lanejit against Inductor and against eager, the median of the per-round
ratios with its [min-max] and win count (not a confidence interval, and
not the ratio of the displayed times). Every compiled variant's output is
checked against eager (atol = rtol = 5e-5; training: the gradients) before
timing.

Compile time: each variant's first call (compile and run) in a fresh
process with empty Inductor and lanejit caches, per case.

    .venv/bin/python python/bench/dynamo_block.py [--quick] [--out DIR]

Writes DIR/report.md, DIR/chart.svg and DIR/results.json (default
out/dynamo-<UTC time>), each whole or not at all.
"""

import argparse
import copy
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from lanejit import _write_whole, dynamo  # noqa: E402,F401  (dynamo registers the backend)
from torch_compile import visit  # noqa: E402  (python/bench/torch_compile.py)
from torch_models import DecoderBlock, RMSNorm, fixture, masked_softmax, rope  # noqa: E402

VARIANTS = ("eager", "inductor", "lanejit")
C, HEADS, HIDDEN = 512, 8, 1376
TOL = 5e-5


def block_args(t, requires_grad=False):
    x = fixture((1, t, C))
    cos = fixture((t, C // HEADS), 1.0, 0.013, torch.cos)
    sin = fixture((t, C // HEADS), 1.0, 0.013, torch.sin)
    return x.requires_grad_(requires_grad), cos, sin


def swiglu(g, u):
    return F.silu(g) * u


def cases(quick):
    """(name, kind, make) where make() -> (model or fn, args)."""
    def block(t):
        torch.manual_seed(0)
        return DecoderBlock(c=C, heads=HEADS, hidden=HIDDEN).eval(), block_args(t)

    def train(t):
        torch.manual_seed(0)
        return DecoderBlock(c=C, heads=HEADS, hidden=HIDDEN), block_args(t)

    d = C // HEADS
    out = [("block forward seq 1", "forward", lambda: block(1)),
           ("block forward seq 128", "forward", lambda: block(128)),
           ("block training step seq 128", "train", lambda: train(128))]
    for t in (1, 128):
        out += [
            (f"part rmsnorm 1x{t}x{C}", "forward",
             lambda t=t: (RMSNorm(C), (fixture((1, t, C)),))),
            (f"part rope 1x{HEADS}x{t}x{d}", "forward",
             lambda t=t: (rope, (fixture((1, HEADS, t, d)),
                                 fixture((t, d), 1.0, 0.013, torch.cos),
                                 fixture((t, d), 1.0, 0.013, torch.sin)))),
            (f"part swiglu 1x{t}x{HIDDEN}", "forward",
             lambda t=t: (swiglu, (fixture((1, t, HIDDEN)),
                                   fixture((1, t, HIDDEN), 0.9, 0.031, torch.cos)))),
        ]
        if t > 1:
            out.append((f"part causal softmax 1x{HEADS}x{t}x{t}", "forward",
                        lambda t=t: (masked_softmax, (fixture((1, HEADS, t, t)),))))
    if quick:
        out = [c for c in out if "seq 128" in c[0] or "x128x" in c[0] or "x128" in c[0]]
    return out


def compiled(variant, fn, threads):
    if variant == "eager":
        return fn
    if variant == "inductor":
        return torch.compile(fn)
    return torch.compile(fn, backend="lanejit", options={"threads": threads})


def step_fn(model):
    """A training step: forward, loss, backward, SGD step."""
    opt = torch.optim.SGD(model.parameters() if isinstance(model, torch.nn.Module)
                          else model._orig_mod.parameters(), lr=1e-4, foreach=False)

    def step(x, cos, sin):
        opt.zero_grad(set_to_none=False)
        loss = model(x, cos, sin).square().mean()
        loss.backward()
        opt.step()
        return loss
    return step


def callable_for(variant, kind, model, threads):
    if kind == "forward":
        fn = compiled(variant, model, threads)

        def call(*args):
            with torch.no_grad():
                return fn(*args)
        return call
    return step_fn(compiled(variant, copy.deepcopy(model), threads))


def close(a, b):
    a, b = a.double(), b.double()
    return bool(((a - b).abs() <= TOL + TOL * b.abs()).all())


def check(name, kind, make, threads):
    """Each compiled variant against eager before timing."""
    model, args = make()
    if kind == "forward":
        with torch.no_grad():
            want = model(*args)
            for v in VARIANTS[1:]:
                got = compiled(v, model, threads)(*args)
                assert close(got, want), f"{name}: {v} differs from eager"
        return
    grads = {}
    for v in VARIANTS:
        m = copy.deepcopy(model)
        fn = compiled(v, m, threads)
        fn(*args).square().mean().backward()
        grads[v] = [p.grad for p in m.parameters()]
    for v in VARIANTS[1:]:
        for g, w in zip(grads[v], grads["eager"]):
            assert torch.allclose(g, w, atol=1e-4, rtol=1e-3), f"{name}: {v} gradients differ"


def paired(times, a, b):
    r = [x / y for x, y in zip(times[a], times[b])]
    return {"median": statistics.median(r), "min": min(r), "max": max(r),
            "wins": sum(x < 1 for x in r), "rounds": len(r)}


def compile_probe(case_name, variant, threads):
    """Seconds of the first call in a fresh process with empty caches."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"),
                   XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
        r = subprocess.run([sys.executable, __file__, "--probe", case_name, variant,
                            str(threads)], capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"compile probe {case_name} {variant}: {r.stderr[-2000:]}")
    return float(r.stdout.strip().splitlines()[-1])


def run_probe(case_name, variant, threads):
    torch.set_num_threads(threads)
    name, kind, make = next(c for c in cases(False) if c[0] == case_name)
    model, args = make()
    fn = callable_for(variant, kind, model, threads)
    t0 = time.perf_counter()
    fn(*args)
    print(time.perf_counter() - t0)


def inductor_config():
    from torch._inductor import config
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        isa = str(pick_vec_isa())
    except Exception as e:  # noqa: BLE001
        isa = f"unknown ({e})"
    return {"torch": torch.__version__, "vector ISA": isa, "cpp compiler": config.cpp.cxx,
            "simdlen": config.cpp.simdlen, "max_autotune": config.max_autotune,
            "freezing": config.freezing, "fallback_random": config.fallback_random,
            "cpp_wrapper": config.cpp_wrapper}


def fmt(ns):
    return f"{ns / 1e3:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def write_whole(path, text):
    _write_whole(path, text.encode())


def chart(results):
    """An SVG bar chart of lanejit / Inductor per case and thread count."""
    rows = [(f"{r['case']} t{r['threads']}", r["lanejit/inductor"]["median"]) for r in results]
    w, bar, left = 720, 18, 300
    top = max([x for _, x in rows] + [1.2])
    h = 40 + bar * len(rows) * 1.4
    scale = (w - left - 40) / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h:.0f}" '
           'font-family="sans-serif" font-size="11">',
           '<text x="10" y="16">lanejit / Inductor, median of paired ratios (below 1: lanejit '
           'faster)</text>']
    x1 = left + scale
    out.append(f'<line x1="{x1:.1f}" y1="24" x2="{x1:.1f}" y2="{h - 8:.0f}" stroke="#444" '
               'stroke-dasharray="3,3"/>')
    for i, (label, ratio) in enumerate(rows):
        y = 30 + i * bar * 1.4
        color = "#2a7" if ratio <= 1 else "#c53"
        out.append(f'<text x="{left - 6}" y="{y + 12:.1f}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{left}" y="{y:.1f}" width="{ratio * scale:.1f}" height="{bar}" '
                   f'fill="{color}"/>')
        out.append(f'<text x="{left + ratio * scale + 4:.1f}" y="{y + 12:.1f}">'
                   f'{ratio:.2f}×</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        return run_probe(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="seq 128 cases only, 6 rounds")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 12, quick 6)")
    p.add_argument("--visit-ms", type=float, default=20)
    p.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    p.add_argument("--only", default="", help="cases whose name contains this")
    p.add_argument("--no-compile-times", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    rounds = a.rounds or (6 if a.quick else 12)
    orders = list(itertools.permutations(VARIANTS))
    out_dir = a.out or os.path.join("out", time.strftime("dynamo-%Y%m%d-%H%M%S", time.gmtime()))
    os.makedirs(out_dir, exist_ok=True)
    config = inductor_config()
    print("Inductor as shipped:", json.dumps(config))
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    for threads in [int(t) for t in a.threads.split(",")]:
        torch.set_num_threads(threads)
        for name, kind, make in cases(a.quick):
            if a.only not in name:
                continue
            # Each case from nothing: Dynamo keeps what it saw per code object
            # (a second length would make the sequence dynamic; past 8 entries
            # it stops compiling and runs eagerly).
            torch._dynamo.reset()
            check(name, kind, make, threads)
            model, args = make()
            fns = {v: callable_for(v, kind, model, threads) for v in VARIANTS}
            for v in VARIANTS:
                fns[v](*args)  # compile outside the timing
            times = {v: [] for v in VARIANTS}
            for r in range(rounds):
                for v in orders[r % len(orders)]:
                    times[v].append(visit(fns[v], args, a.visit_ms * 1e6))
            row = {"case": name, "threads": threads,
                   "median_ns": {v: statistics.median(times[v]) for v in VARIANTS},
                   "samples_ns": times,
                   "lanejit/inductor": paired(times, "lanejit", "inductor"),
                   "lanejit/eager": paired(times, "lanejit", "eager")}
            if not a.no_compile_times and not name.startswith("part"):
                row["compile_s"] = {v: compile_probe(name, v, threads) for v in VARIANTS[1:]}
            results.append(row)
            li = row["lanejit/inductor"]
            comp = row.get("compile_s")
            print(f"{name:<36} t{threads}  eager {fmt(row['median_ns']['eager']):>10}  "
                  f"inductor {fmt(row['median_ns']['inductor']):>10}  "
                  f"lanejit {fmt(row['median_ns']['lanejit']):>10}  lanejit/inductor "
                  f"{li['median']:.2f} [{li['min']:.2f}-{li['max']:.2f}] "
                  f"{li['wins']}/{li['rounds']}"
                  + (f"  compile inductor {comp['inductor']:.1f} s lanejit "
                     f"{comp['lanejit']:.1f} s" if comp else ""), flush=True)
    load_after = os.getloadavg()[0]
    lines = ["| case | threads | eager | Inductor | lanejit | lanejit / Inductor | [min–max] "
             "| wins | lanejit / eager | compile Inductor | compile lanejit |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for r in results:
        li, le, c = r["lanejit/inductor"], r["lanejit/eager"], r.get("compile_s")
        lines.append(
            f"| {r['case']} | {r['threads']} | {fmt(r['median_ns']['eager'])} | "
            f"{fmt(r['median_ns']['inductor'])} | {fmt(r['median_ns']['lanejit'])} | "
            f"{li['median']:.2f}× | {li['min']:.2f}–{li['max']:.2f} | {li['wins']}/{li['rounds']} "
            f"| {le['median']:.2f}× | " + (f"{c['inductor']:.1f} s | {c['lanejit']:.1f} s |"
                                           if c else "– | – |"))
    table = "\n".join(lines)
    print(f"load average after: {load_after:.2f}\n\n{table}")
    report = (f"# eager, Inductor and lanejit on a decoder block\n\n"
              f"`{' '.join(sys.argv)}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
              f"Inductor as shipped: {json.dumps(config)}; block C={C}, {HEADS} heads, "
              f"SwiGLU hidden {HIDDEN}; {rounds} rounds of {a.visit_ms:g} ms visits; "
              f"load average {os.getloadavg()[0]:.2f} after.\n\nRatios are medians of "
              f"per-round ratios (not a confidence interval, not the ratio of the displayed "
              f"times); wins: rounds where lanejit was faster than Inductor.\n\n{table}\n")
    write_whole(os.path.join(out_dir, "report.md"), report)
    write_whole(os.path.join(out_dir, "chart.svg"), chart(results))
    write_whole(os.path.join(out_dir, "results.json"),
                json.dumps({"config": config, "rounds": rounds, "results": results}, indent=1))
    print(f"\nwrote {out_dir}/report.md, chart.svg, results.json")


if __name__ == "__main__":
    main()
