// lanejit/options.h — every switch of the compiler, in one struct.
//
// Each field has an environment variable (docs/switches.md lists them all);
// fromEnvironment() applies them over a base. For booleans,
// LANEJIT_ENABLE_<X>=1 turns a switch on and LANEJIT_DISABLE_<X>=1 turns it
// off; when both are set, disable wins. No switch changes an output bit,
// NaNs included: every NaN a kernel writes is the quiet NaN 0xffc00000,
// whether computed or copied from an input (docs/switches.md, "NaN results").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lanejit {

struct CompileOptions {
  // Lanes per packet (4, 8 or 16 for f32); 0 picks the widest the target has.
  int lanes = 0;
  // Pointwise fusion: chains of elementwise operations are computed in one
  // pass over packets. Off: every elementwise result is materialized in the
  // kernel's workspace and read back by its users.
  bool fuse_pointwise = true;
  // Reduction fusion: a reduction computes its operand expression inside its
  // own traversal. Off: the operand is materialized first.
  bool fuse_reductions = true;
  // Output fusion: writes and reductions of equal length and depth share one
  // traversal (RoPE writes both halves of y in one pass). Off: one traversal
  // per write and per reduction.
  bool fuse_outputs = true;
  // Masked-column bounds: when every reduction and write of a traversal is
  // select(col <= u, value, other) with u row-uniform, columns past u are
  // skipped (reductions: `other` is their identity) or filled with `other`
  // (writes) instead of computed. Off: every column is computed and masked.
  bool bound_masked_columns = true;
  // Materialize or recompute: a value a later traversal re-reads (masked
  // softmax's exp(x - max)) is stored by the traversal that first computes
  // it and loaded back, when recomputing costs more than a store and a load
  // (docs/architecture.md). Off: always recomputed.
  bool materialize_or_recompute = true;
  // Full packets run a body compiled with the constant all-on mask; only the
  // tail runs the masked body. Off: every packet runs the masked body.
  bool specialize_full_packets = true;
  // In-place proofs: an output that is exactly an input (same address and
  // row stride) is read and written directly when the traversal order is
  // proved safe. Off: every such pair takes the guarded safe path.
  bool prove_in_place = true;
  // Alias guards are evaluated once per entry call (they are launch-uniform).
  // Off: evaluated again for every row.
  bool hoist_guards = true;
  // A reduction's tail packet joins the accumulator its columns belong to by
  // lane masks (a merge-masked add) instead of branching on which one it
  // is. Off: a select per accumulator on the accumulator's number. Off by
  // default: it gained nothing measurable on LayerNorm/RMSNorm and leaves
  // masked operations in innermost loops (tests/inspect/inspect_test.cpp).
  bool branchless_tail = false;
  // An all-elementwise program (no reductions, row or column indices,
  // column vectors or slices) called with dense row tensors (row stride C)
  // runs each call's rows as one row of rows x C columns: one masked tail
  // per call instead of one per row. Off: row by row.
  bool flatten_rows = true;
  // Fills past a column bound (masked softmax's zeros) are vector stores
  // in the kernel. Off: LLVM's loop-idiom pass turns the fill loop (splat
  // stores of a value whose bytes are equal, like 0.0f) into a memset call
  // per row.
  bool fill_stores = true;
  // Streaming stores: a traversal that only writes (no reductions, no
  // column bound) stores its full packets with non-temporal stores, which
  // bypass the caches, when the call writes at least stream_min_kib KiB per
  // output (rows x C x its element size): a large output is not read again from the
  // cache, and a normal store would first read each line in. Each row's
  // first packet is shortened so the rest are aligned. Same values stored;
  // off: normal stores at every size. Off by default until measured on a
  // quiet machine for every case (docs/switches.md says what is known).
  bool stream_stores = false;
  int stream_min_kib = 4096;
  // Prefetch of the next row: in a row of two or more traversals, the one
  // before the last prefetches the next row's row-tensor inputs, so they
  // arrive while the last traversal runs. Only in calls whose row data (rows
  // x C x element size for each row-tensor input and output) reach
  // prefetch_min_kib KiB: on data the caches hold, the prefetches only take
  // load slots (docs/switches.md has the measurements). No effect on values.
  bool prefetch_next_row = true;
  int prefetch_min_kib = 16384;
  // Packet bodies: emitted as helper functions and inlined or called by a
  // cost rule (docs/architecture.md), or forced either way.
  enum class Inline { CostRule, Always, Never };
  Inline inline_packet_bodies = Inline::CostRule;
  // Rows per entry call; a thread's share is split into runs of blocks
  // (launch/row_launch.h).
  int block_rows = 32;
  // Threads a call may use (the pool, docs/architecture.md "Threads"); unset:
  // the CPUs this process may run on (its affinity). Must be in [1, 256].
  // Any count gives the same bits; it does not change code.
  std::optional<int> threads;
  // LLVM optimisation level for the JIT's pass pipeline (0-3).
  int opt_level = 2;
  // The short LLVM pipeline chosen for lanejit's already-vectorised IR
  // (src/jit/optimizer.cpp; docs/compile-time.md): O2's kernel speed in less
  // compile time. Off: LLVM's default O<opt_level> pipeline. Not used at
  // opt_level 0.
  bool lean_llvm_pipeline = true;
  // LLVM's loop unroller may unroll lanejit's packet and row loops. Off:
  // they are marked llvm.loop.unroll.disable (the plan's K packets per
  // group are already unrolled; LLVM's copies cost compile time).
  bool llvm_loop_unroll = false;
  // A row's full packets left over after its groups of K (0..K-1 of them)
  // run in one loop on the accumulators spilled to an array, indexed at
  // run time. Off: K-1 inlined packet bodies behind branches, which doubled
  // the code and the compile time of reductions at W = 8 (K = 8). Entries
  // compiled for their C know how many are left and emit just those; those
  // whose rows stop at a column bound keep the branches (faster there).
  bool leftover_loop = true;
  // A float max or min reduction on short rows (C <= 128 columns; entries
  // compiled for their C) keeps one accumulator instead of 64/W: max and
  // min are exactly associative and commutative, so the bits are the same,
  // and such rows are too short for K chains to pay for their set-up, the
  // tail's choice among them and their combine tree.
  bool single_max_accumulator = true;
  // AArch64: the generic entry's loops without reductions (the output
  // loops) run two packets per iteration instead of one, with immediate
  // offsets instead of a post-increment per packet (docs/aarch64-estimates.md,
  // item 5). Off, and on x86 (where it was not measured to pay), one
  // packet per iteration. The same packets in the same order: the same bits.
  bool unroll_output_loops = true;
  // AArch64: the tail packet of a column-bounded traversal (masked
  // softmax's) that lies inside the row loads whole packets and stores the
  // bound's fill on its lanes past the bound, and the fills end with the
  // row's last packet when it is all fill, instead of lane-masked loads and
  // stores, which NEON runs as a branch per lane (docs/aarch64-estimates.md,
  // item 3). The same values reach memory: the same bits.
  bool in_row_tails = true;
  // A max reduction over absolute values (an absmax, as int8 quantization
  // takes: `reduce.max`/`group.max` of `abs`) steps by a signed integer max
  // of the bits, one instruction where the IEEE maximum takes three. For
  // floats with the sign bit clear the integer order is the float order,
  // every NaN above +inf; the same bits reach every output.
  bool integer_absmax = true;
  // Few long rows (fewer rows than threads) are split by column chunks
  // across threads, with the same bits (docs/architecture.md, "Threads").
  // Off: no column-split entry is compiled and such calls split only rows.
  bool column_split = true;
  // Short rows: calls with C <= 1024 columns run an entry specialised for
  // their C (at most 8 per kernel), so packet counts, the tail's mask and
  // untouched accumulators are constants. run() compiles it on the third
  // call with that C; bind() and nativeEntry(R, C) at once. The same
  // operations on every element: the same bits. Off: one entry for every C.
  bool specialize_columns = true;
  // Narrow rows (C at most the mapping rule's limit, lower/choose_mapping.h)
  // run across lanes: blocks of W rows share packets (P lanes or Q packets a
  // row), from an entry compiled at the first call per C; bits as packet-local.
  // Off: every call runs packet-local.
  bool rows_across_lanes = true;
  // Tune on first call: the first call with a C for which the persistent
  // cache holds no tune record (lanejit/tune.h) measures the candidate
  // configurations for that shape (up to 1.5 s, once per kernel and C),
  // records the fastest and runs it. Off: calls use a record when one
  // exists and never measure. Same bits either way.
  bool tune_on_first_call = false;
  // Passes (by name, see docs/switches.md) to skip.
  std::vector<std::string> disabled_passes;
  // Print the IR after every pass that changed it, and pass timings, to stderr.
  bool dump_passes = false;
  bool time_passes = false;
  // Target: an LLVM triple, "aarch64-linux-gnu" or "x86_64-linux-gnu";
  // empty means the host's. Code for another architecture is compiled, not
  // linked: it can be inspected or written out (lanejit aot), and run there
  // (docs/aarch64.md).
  std::string target_triple;
  // Target: an LLVM CPU name of the target's architecture (x86-64:
  // "x86-64-v3", "x86-64-v4", "znver4", ...; aarch64: "apple-m1",
  // "neoverse-v1", ...) whose features and tuning the code is compiled for,
  // the host's never consulted (so the code is the same on any machine);
  // empty means the host, detected at run time (aarch64: "generic"). Code
  // for a CPU the host is not may only be inspected or written out (lanejit
  // aot), not run here.
  std::string target_cpu;
  // Target: CPU features as LLVM spells them ("+avx2,-avx512f,..."), applied
  // on top of target_cpu's (or the host's); "-x" also turns off every
  // feature that needs x.
  std::string target_features;

  // Applies LANEJIT_* environment variables over `base`; throws Error on a
  // malformed value.
  static CompileOptions fromEnvironment(CompileOptions base);
  static CompileOptions fromEnvironment();
  // Boolean switches by their environment name (FUSE_POINTWISE, ...;
  // docs/switches.md), for the CLI's --enable/--disable. Throws Error on an
  // unknown name. INLINE_PACKET_BODIES forces inlining on or off.
  void setSwitch(const std::string &name, bool on);
  static std::vector<std::string> switchNames();
  // A stable, complete text form of every field that changes code (part of
  // the kernel cache key; benchmark bundles record it), and its inverse,
  // which throws Error(Kind::Compile) on anything but a key() string.
  std::string key() const;
  static CompileOptions fromKey(const std::string &key);
};

} // namespace lanejit
