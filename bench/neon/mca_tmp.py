#!/usr/bin/env python3
"""Per-row cycle estimates on Apple M1 (llvm-mca's apple-m1 model) for
lanejit's aarch64 kernels and the hand-written NEON peers (bench/neon).

No ARM machine is here, so this is a static proxy, not a timing. Method
(docs/aarch64-estimates.md):
  1. lanejit's kernels: `lanejit dump --stage asm --target aarch64-linux-gnu
     --target-cpu apple-m1` (the column-specialised entry at the short
     shape, the generic one at the long shape), assembled and linked with
     the peers and trace_driver.c into one static aarch64 program.
  2. qemu-aarch64 runs each kernel on fixture inputs with `-d
     in_asm,exec,nochain -dfilter` over the kernels' addresses: every
     executed translation block, in order, between two marker calls, i.e.
     the call's exact dynamic instruction stream (a call out of that range
     is refused, not silently left out).
  3. llvm-mca -mcpu=apple-m1 simulates each call's whole stream once as
     straight-line code (-iterations=1): the headline cycles per row.
  4. --detail: the stream is also cut into innermost-loop runs (a loop:
     the target of a backward branch up to its last latch) and the pieces
     between them, each loop's steady-state cycles per iteration
     ((T100 - T1) / 99) and iterations per row printed with its instruction
     mix; the piecewise sum (T1 per piece, no overlap between pieces) is
     printed beside the whole-trace number.

Python 3 standard library only. Needs: the lanejit CLI (built),
aarch64-linux-gnu-gcc, qemu-aarch64, llvm-mca and llvm-objdump (LLVM 16).
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OPS = ["rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual", "masked_softmax"]
PEERS = {"rmsnorm", "masked_softmax"}
TRIPLE = "aarch64-linux-gnu"
CPU = "apple-m1"
# The seed's shapes (docs/bench.md): RoPE needs an even C.
SHAPES = {"short": (17, 65), "long": (1024, 4097)}
ROPE_SHAPES = {"short": (17, 66), "long": (1024, 4098)}
# Rows per traced entry call at the long shapes (lanejit's launch hands out
# 32; 8 keeps the simulated streams short, and a call's entry and exit
# are still < 2% of 8 long rows). Short shapes run as one call of R rows.
BLOCK_ROWS = 8
SAMPLES = 4
BRANCH = re.compile(r"^(b|b\.\w+|bl|cbn?z|tbn?z)$")
TARGET = re.compile(r"0x([0-9a-f]+)(?: <[^>]*>)?$")


def tool(name, *fallbacks):
    for candidate in (name,) + fallbacks:
        path = shutil.which(candidate)
        if path:
            return path
    sys.exit(f"mca_estimate: {name} not found")


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"mca_estimate: {' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return result.stdout


class Tools:
    def __init__(self, args):
        self.cli = args.lanejit
        self.cc = tool("aarch64-linux-gnu-gcc")
        self.qemu = tool("qemu-aarch64")
        self.mca = tool("llvm-mca-16", "/usr/lib/llvm-16/bin/llvm-mca", "llvm-mca")
        self.objdump = tool("llvm-objdump-16", "/usr/lib/llvm-16/bin/llvm-objdump")
        self.sysroot = args.sysroot


# ---- building the traced program -----------------------------------------


def shape_of(op, which):
    return (ROPE_SHAPES if op == "rope" else SHAPES)[which]


def dump_entry(tools, op, cols, path):
    """Writes lanejit's aarch64 assembly for op (cols: the C-specialised
    entry, None: the generic one) and returns its global symbol."""
    cmd = [tools.cli, "dump", "--stage", "asm", "--target", TRIPLE, "--target-cpu", CPU] + os.environ.get("EXTRA", "").split()
    if cols is not None:
        cmd += ["--cols", str(cols)]
    text = run(cmd + [f"lib:{op}"])
    with open(path, "w") as f:
        f.write(text)
    symbols = re.findall(r"^\s*\.globl\s+(\S+)", text, re.M)
    if len(symbols) != 1:
        sys.exit(f"mca_estimate: expected one global in {path}, found {symbols}")
    return symbols[0]


def build(tools, work, peer_builds):
    """Builds one traced program per peer compiler (the same lanejit
    objects in each); returns ({tag: executable}, {(op, kind): symbol})."""
    objects, symbols = [], {}
    for op in OPS:
        for kind, cols in (("generic", None), ("cols", shape_of(op, "short")[1])):
            asm = os.path.join(work, f"{op}_{kind}.s")
            symbols[(op, kind)] = dump_entry(tools, op, cols, asm)
            obj = asm[:-2] + ".o"
            run([tools.cc, "-c", asm, "-o", obj])
            objects.append(obj)
    table = os.path.join(work, "entries.c")
    with open(table, "w") as f:
        f.write("#include <lanejit/launch_abi.h>\n")
        for sym in symbols.values():
            f.write(f"void {sym}(const lanejit_launch_args *, int64_t, int64_t);\n")
        f.write("struct lj_named_entry { const char *symbol; lanejit_entry_fn fn; };\n")
        f.write("const struct lj_named_entry lj_entries[] = {\n")
        for sym in symbols.values():
            f.write(f'  {{"{sym}", {sym}}},\n')
        f.write("};\nconst int lj_entry_count = %d;\n" % len(symbols))
        # Not inlined and not merged: their calls bound each traced call.
        f.write('__attribute__((noinline)) void lj_trace_begin(void) '
                '{ __asm__ volatile("" ::: "memory"); }\n')
        f.write('__attribute__((noinline)) void lj_trace_end(void) '
                '{ __asm__ volatile("nop" ::: "memory"); }\n')
    exes = {}
    for tag, peer_cc in peer_builds:
        peer_obj = os.path.join(work, f"neon_kernels_{tag}.o")
        run(peer_cc + ["-I", HERE, "-c", os.path.join(HERE, "neon_kernels.c"), "-o", peer_obj])
        exe = exes[tag] = os.path.join(work, f"trace_driver_{tag}")
        # Link order = address order: markers, peers, kernels form one range
        # (the one qemu logs); the driver's own loops come after it.
        run([tools.cc, "-O2", "-static", "-no-pie", "-I", os.path.join(ROOT, "include"),
             "-I", HERE, table, peer_obj] + objects +
            [os.path.join(HERE, "trace_driver.c"), "-lm", "-o", exe])
    return exes, symbols


class Program:
    """The traced executable's instructions (llvm-objdump) and symbols."""

    def __init__(self, tools, exe):
        self.text = {}  # address -> (mnemonic, operands)
        self.symbols = {}  # name -> (start, end)
        self.owner = {}  # address -> symbol name
        current = None
        out = run([tools.objdump, "-d", "--no-show-raw-insn", f"--mcpu={CPU}", exe])
        for line in out.splitlines():
            m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
            if m:
                current = m.group(2)
                self.symbols[current] = [int(m.group(1), 16), int(m.group(1), 16)]
                continue
            m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
            if m and current:
                addr = int(m.group(1), 16)
                self.text[addr] = (m.group(2), m.group(3).split("//")[0].strip())
                self.owner[addr] = current
                self.symbols[current][1] = addr + 4
        self.heads = self._innermost_loops()

    def branch_target(self, addr):
        mnemonic, operands = self.text[addr]
        if not BRANCH.match(mnemonic):
            return None
        m = TARGET.search(operands)
        return int(m.group(1), 16) if m else None

    def _innermost_loops(self):
        """{head: last latch address} for loops that contain no other head:
        a head is the target of a backward branch in the same function."""
        ends = {}
        for addr in self.text:
            target = self.branch_target(addr)
            if target is not None and target <= addr and \
                    self.owner.get(target) == self.owner[addr]:
                ends[target] = max(ends.get(target, target), addr)
        heads = sorted(ends)
        inner = {}
        for i, h in enumerate(heads):
            nested = i + 1 < len(heads) and heads[i + 1] <= ends[h]
            if not nested:
                inner[h] = ends[h]
        return inner

    def mca_line(self, addr):
        """The instruction as llvm-mca reads it: branch and adrp targets
        become a label (mca does not follow control flow)."""
        mnemonic, operands = self.text[addr]
        operands = re.sub(r"0x[0-9a-f]+ <[^>]*>", ".Lt", operands)
        if (BRANCH.match(mnemonic) or mnemonic in ("adr", "adrp")) and \
                re.search(r"(^|, )0x[0-9a-f]+$", operands):
            operands = re.sub(r"0x[0-9a-f]+$", ".Lt", operands)
        return f"{mnemonic}\t{operands}"


# ---- tracing -------------------------------------------------------------


def traced_range(prog, symbols):
    """[lo, hi): the markers, the peers and every lanejit entry."""
    names = ["lj_trace_begin", "lj_trace_end", "neon_rmsnorm", "neon_masked_softmax"]
    names += list(symbols.values())
    lo = min(prog.symbols[n][0] for n in names)
    hi = max(prog.symbols[n][1] for n in names)
    inside = {prog.owner[a] for a in prog.text if lo <= a < hi}
    if "main" in inside:
        sys.exit("mca_estimate: the driver's main landed inside the traced range")
    return lo, hi


def trace(tools, prog, exe, argv, work, span):
    """The dynamic instruction addresses of each kernel call in one run."""
    log = os.path.join(work, "qemu.log")
    lo, hi = span
    cmd = [tools.qemu, "-L", tools.sysroot, "-d", "in_asm,exec,nochain",
           "-dfilter", f"{lo:#x}..{hi - 1:#x}", "-D", log, exe] + argv
    run(cmd)
    begin = prog.symbols["lj_trace_begin"][0]
    end = prog.symbols["lj_trace_end"][0]
    blocks, calls, inside = {}, [], False
    current = None
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("IN:"):
                current = []
                continue
            if current is not None:
                m = re.match(r"^0x([0-9a-f]+):", line)
                if m:
                    current.append(int(m.group(1), 16))
                    continue
                if current:
                    blocks[current[0]] = current
                current = None
            if line.startswith("Trace "):
                pc = int(line.split("[", 1)[1].split("/")[1], 16)
                if pc == begin:
                    inside = True
                    calls.append([])
                elif pc == end:
                    inside = False
                elif inside:
                    calls[-1].extend(blocks[pc])
    os.remove(log)
    # A call out of the range would go unpriced: refuse rather than undercount.
    out = {a for c in calls for a in set(c) if prog.text[a][0] in ("bl", "blr", "br")}
    if out:
        sys.exit("mca_estimate: the traced code calls out: " +
                 ", ".join(describe(prog, a) for a in sorted(out)))
    return calls


# ---- pricing -------------------------------------------------------------


class Mca:
    def __init__(self, tools, prog, work):
        self.tools, self.prog, self.work, self.cache = tools, prog, work, {}

    def cycles(self, path, iterations):
        key = (path, iterations)
        if key not in self.cache:
            src = os.path.join(self.work, "piece.s")
            with open(src, "w") as f:
                f.write("\n".join(self.prog.mca_line(a) for a in path) + "\n.Lt:\n")
            out = run([self.tools.mca, "-mtriple=aarch64", f"-mcpu={CPU}",
                       f"-iterations={iterations}", "-all-views=false", "-summary-view", src])
            self.cache[key] = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
        return self.cache[key]

    def whole(self, stream):
        """Cycles of a whole call's dynamic instruction stream, simulated
        once as straight-line code (the method's headline number)."""
        src = os.path.join(self.work, "call.s")
        with open(src, "w") as f:
            f.write("\n".join(self.prog.mca_line(a) for a in stream) + "\n.Lt:\n")
        out = run([self.tools.mca, "-mtriple=aarch64", f"-mcpu={CPU}", "-iterations=1",
                   "-all-views=false", "-summary-view", src])
        return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))

    def throughput(self, path):
        return (self.cycles(path, 100) - self.cycles(path, 1)) / 99.0


def pieces(prog, stream):
    """Cuts the stream into ("loop", head, [paths]) runs and ("line", path)
    pieces; a path is a tuple of addresses. A run starts at a visit of an
    innermost loop's head and ends when the stream leaves the loop."""
    out, line, i, n = [], [], 0, len(stream)
    while i < n:
        head = stream[i]
        end = prog.heads.get(head)
        if end is None:
            line.append(head)
            i += 1
            continue
        iterations = []
        while i < n and stream[i] == head:
            j = i + 1
            while j < n and head <= stream[j] <= end and stream[j] != head:
                j += 1
            # Back at the head, or the iteration that leaves the loop (a
            # bottom-tested loop's last one is complete; an exit from the
            # middle leaves a prefix): both are iterations of this run.
            iterations.append(tuple(stream[i:j]))
            i = j
        if line:
            out.append(("line", tuple(line)))
            line = []
        out.append(("loop", head, iterations))
    if line:
        out.append(("line", tuple(line)))
    return out


class Estimate:
    def __init__(self):
        self.total = 0.0
        self.loops = collections.defaultdict(lambda: [0, 0.0, 0.0, None])  # iters, cycles
        self.line_cycles = 0.0
        self.line_insns = 0
        self.lines = collections.defaultdict(lambda: [0, 0.0, 0])  # (first, last): n, cyc, len


def price(mca, prog, stream):
    est = Estimate()
    for piece in pieces(prog, stream):
        if piece[0] == "line":
            c = mca.cycles(piece[1], 1)
            est.line_cycles += c
            est.line_insns += len(piece[1])
            rec = est.lines[(piece[1][0], piece[1][-1])]
            rec[0] += 1
            rec[1] += c
            rec[2] = len(piece[1])
            est.total += c
            continue
        _, head, iterations = piece
        first = iterations[0]
        c = mca.cycles(first, 1) + sum(mca.throughput(p) for p in iterations[1:])
        rec = est.loops[head]
        rec[0] += len(iterations)
        rec[1] += c
        rec[2] = mca.throughput(first)
        rec[3] = first
        est.total += c
    return est


# ---- the cases -----------------------------------------------------------


def row_blocks(rows, all_rows):
    """One call of every row when R <= 32; else SAMPLES calls of BLOCK_ROWS
    rows spread evenly, whose mean row index is the problem's (so masked
    softmax's mean valid length is the shape's), or (all_rows) every row."""
    if rows <= 32:
        return [(0, rows)]
    if all_rows:
        return [(s, min(s + BLOCK_ROWS, rows)) for s in range(0, rows, BLOCK_ROWS)]
    part = rows // SAMPLES
    starts = [q * part + (part - BLOCK_ROWS) // 2 for q in range(SAMPLES)]
    return [(s, s + BLOCK_ROWS) for s in starts]


def describe(prog, addr):
    sym = prog.owner.get(addr, "?")
    return f"{sym}+{addr - prog.symbols[sym][0]:#x}" if sym in prog.symbols else hex(addr)


def mix(prog, path):
    counts = collections.Counter(prog.text[a][0] for a in path)
    return " ".join(f"{m}x{c}" for m, c in counts.most_common(8))


class Traced:
    """One traced program: its instructions, logged range and prices."""

    def __init__(self, tools, exe, symbols, work):
        self.tools, self.exe, self.work = tools, exe, work
        self.prog = Program(tools, exe)
        self.span = traced_range(self.prog, symbols)
        self.mca = Mca(tools, self.prog, work)

    def estimate(self, argv):
        """(whole-trace cycles, the piecewise Estimate, instructions) over
        the calls of one run."""
        calls = trace(self.tools, self.prog, self.exe, argv, self.work, self.span)
        whole = sum(self.mca.whole(c) for c in calls)
        return whole, price(self.mca, self.prog, [a for c in calls for a in c]), \
            sum(len(c) for c in calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lanejit", default=os.path.join(ROOT, "build", "tools", "lanejit"))
    ap.add_argument("--sysroot", default="/usr/aarch64-linux-gnu")
    # No errno (a sqrtf call otherwise) and no loop-to-memset/memcpy
    # rewriting, so that the peer's work stays in its own traced code.
    # GCC 12 knows no apple-m1: neoverse-n1 is the nearest (ARMv8.2 + dot
    # product). The peer's number is the better of the two compilers.
    ap.add_argument("--gcc-flags", default="-O3 -mcpu=neoverse-n1 -ffp-contract=off "
                    "-fno-math-errno -fno-tree-loop-distribute-patterns")
    ap.add_argument("--clang-flags", default="--target=aarch64-linux-gnu -mcpu=apple-m1 -O3 "
                    "-ffp-contract=off -fno-math-errno -fno-builtin",
                    help="clang-16's flags; --clang-flags= (empty) skips clang")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--all-rows", action="store_true",
                    help="trace every row of the long shapes (slow), not four calls of 8 rows")
    ap.add_argument("--detail", action="store_true", help="print each case's loops")
    ap.add_argument("--work", help="keep the build here (default: a temporary folder)")
    args = ap.parse_args()
    tools = Tools(args)
    work = args.work or tempfile.mkdtemp(prefix="lanejit-mca-")
    os.makedirs(work, exist_ok=True)
    peer_builds = [("gcc", [tools.cc] + args.gcc_flags.split())]
    if args.clang_flags:
        peer_builds.append(("clang", [tool("clang-16", "clang")] + args.clang_flags.split()))
    exes, symbols = build(tools, work, peer_builds)
    programs = {tag: Traced(tools, exe, symbols, work) for tag, exe in exes.items()}
    first = programs["gcc"]

    rows_out = []
    for op in args.ops.split(","):
        for which in ("short", "long"):
            R, C = shape_of(op, which)
            blocks = row_blocks(R, args.all_rows)
            traced = sum(b - a for a, b in blocks)
            spans = [f"{a}:{b}" for a, b in blocks]
            kind = "cols" if which == "short" else "generic"
            variants = [("lanejit", first, "lanejit", symbols[(op, kind)])]
            if which == "short":
                variants.append(("lanejit any-C", first, "lanejit", symbols[(op, "generic")]))
            if op in PEERS:
                for tag, traced_prog in programs.items():
                    variants.append((f"neon {tag}", traced_prog, "neon", "-"))
            print(f"mca_estimate: {op} {R}x{C}", file=sys.stderr)
            results, outputs = {}, {}
            for name, program, kind_arg, sym in variants:
                out = os.path.join(work, f"y_{name.replace(' ', '_')}.bin")
                results[name] = program.estimate(
                    [kind_arg, op, sym, str(R), str(C)] + spans + ["--out", out])
                results[name] = results[name] + (program.prog,)
                outputs[name] = out
            notes = [cross_check(outputs["lanejit"], outputs[n], blocks, C)
                     for n in outputs if n.startswith("neon")]
            per_row = {n: (whole / traced, count / traced)
                       for n, (whole, _, count, _) in results.items()}
            rows_out.append((op, f"{R}x{C}", per_row, " ".join(n for n in notes if n)))
            if args.detail:
                for name, (whole, est, count, prog) in results.items():
                    print(f"\n{op} {R}x{C} {name}: {whole / traced:.1f} cycles/row whole-trace, "
                          f"{count / traced:.1f} instructions/row; piecewise "
                          f"{est.total / traced:.1f}, of which straight-line "
                          f"{est.line_cycles / traced:.1f} cycles/row "
                          f"({est.line_insns / traced:.1f} instructions)")
                    for head, (iters, cyc, thr, path) in sorted(
                            est.loops.items(), key=lambda kv: -kv[1][1]):
                        print(f"  loop {describe(prog, head)}: {iters / traced:.1f} it/row, "
                              f"{len(path)} insns, {thr:.2f} cyc/it steady, "
                              f"{cyc / traced:.1f} cyc/row  [{mix(prog, path)}]")
                    for (a, b), (k, cyc, length) in sorted(
                            est.lines.items(), key=lambda kv: -kv[1][1])[:4]:
                        print(f"  line {describe(prog, a)}..{describe(prog, b)}: "
                              f"{k / traced:.1f}/row, {length} insns, {cyc / traced:.1f} cyc/row")
    print()
    print(f"llvm-mca -mcpu={CPU} per-row cycle estimates; lanejit: `lanejit dump --stage asm "
          f"--target {TRIPLE} --target-cpu {CPU}` (the C-specialised entry at the short shape, "
          f"the generic one at the long shape; any-C: the generic one at the short shape); "
          f"neon gcc: {args.gcc_flags}" +
          (f"; neon clang: clang-16 {args.clang_flags}" if args.clang_flags else ""))
    tags = list(programs)
    header = ["operator", "shape", "lanejit cyc/row", "insn/row", "any-C cyc/row"]
    header += [f"neon {t} cyc/row" for t in tags] + ["best neon insn/row", "lanejit/neon"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for op, shape, per_row, note in rows_out:
        lj = per_row["lanejit"]
        anyc = per_row.get("lanejit any-C")
        peers = [per_row[f"neon {t}"] for t in tags if f"neon {t}" in per_row]
        best = min(peers) if peers else None
        cells = [op, shape, f"{lj[0]:.0f}", f"{lj[1]:.0f}", f"{anyc[0]:.0f}" if anyc else ""]
        cells += [f"{per_row[f'neon {t}'][0]:.0f}" if f"neon {t}" in per_row else ""
                  for t in tags]
        cells += [f"{best[1]:.0f}" if best else "", f"{lj[0] / best[0]:.2f}" if best else ""]
        print("| " + " | ".join(cells) + " |" + (f"  {note}" if note else ""))
    if not args.work:
        shutil.rmtree(work)


def cross_check(a_path, b_path, blocks, cols):
    """lanejit's and the peer's outputs on the traced rows: both are within
    5e-5 of the FP64 oracle (tests), so within twice that of each other."""
    with open(a_path, "rb") as f:
        a = f.read()
    with open(b_path, "rb") as f:
        b = f.read()
    worst = 0.0
    for r0, r1 in blocks:
        lo, hi = r0 * cols * 4, r1 * cols * 4
        for x, y in zip(struct.iter_unpack("<f", a[lo:hi]), struct.iter_unpack("<f", b[lo:hi])):
            err = abs(x[0] - y[0]) / (1e-4 + 1e-4 * abs(y[0]))
            if not err <= 1.0:
                return f"OUTPUTS DIFFER ({x[0]} vs {y[0]})"
            worst = max(worst, err)
    return ""


if __name__ == "__main__":
    main()
