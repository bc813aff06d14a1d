// What codegen is told about the machine and what it reports back: plain
// data, no LLVM, so the runtime and the compile report can name them
// without reaching into codegen.
#pragma once

#include <string>

namespace lanejit::codegen {

struct MathTarget {
  // Use llvm.fma for the multiply-adds; otherwise fmul + fadd. Results differ
  // between the two settings, but both stay within the documented bounds.
  bool has_fma = false;
  // AVX-512F (and VL for 4 and 8 lanes): exp scales by 2^n with vscalefps,
  // one instruction for the integer ops and two multiplies of the generic
  // form. A choice of instructions, not of bits: both round once.
  bool has_avx512f = false;
  bool has_avx512vl = false;
  // AVX-512DQ: IEEE maximum/minimum as one vrangeps instead of seven
  // compares and blends (codegen/emit_ops.cpp). The same bits.
  bool has_avx512dq = false;
  // F16C: f16 loads and stores convert with vcvtph2ps/vcvtps2ph; without it,
  // with integer and f32 operations of the same bits (emit_ops.cpp).
  bool has_f16c = false;
  // AVX512_BF16: bf16 stores round with vcvtneps2bf16, its denormal inputs
  // (which it flushes) first made normal and the result corrected
  // (emit_ops.cpp); without it, integer operations. The same bits.
  bool has_avx512bf16 = false;
  // AArch64 NEON: IEEE maximum/minimum as one fmax/fmin (llvm.maximum,
  // -0 < +0, NaN in gives NaN out) and the NaN test of canonicalisation as
  // one facge, where the generic forms take about ten and four
  // instructions (docs/aarch64-estimates.md). The same bits.
  bool aarch64_neon = false;
};

struct CodegenTarget {
  std::string triple; // LLVM's normalised triple: the module's, and the machine's
  bool x86 = true;    // else AArch64: no x86 intrinsics at all
  std::string cpu;
  std::string features;
  MathTarget math;
};

// What codegen emitted, for the compile report. Body counts are copies in
// the emitted code: a helper counts once however many sites call it.
struct CodegenCounts {
  int dense_bodies = 0;                          // bodies with the constant all-on mask
  int masked_bodies = 0;                         // bodies with a run-time lane mask
  int helper_functions = 0;                      // bodies emitted as helper functions
  int helper_calls = 0;                          // call sites of those helpers
  int loads = 0, stores = 0;                     // plain vector loads/stores
  int masked_loads = 0, masked_stores = 0;       // masked vector loads/stores
  int workspace_loads = 0, workspace_stores = 0; // of materialized values (included above)
  int math_expansions = 0;                       // inline exp/log/tanh/sigmoid/erf/rsqrt expansions
  int guards = 0;                                // address comparisons of alias guards
  int guards_hoisted = 0;                        // of those, evaluated once per entry call
};

} // namespace lanejit::codegen
