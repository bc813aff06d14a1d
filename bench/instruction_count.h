// bench/instruction_count.h — how many machine instructions one call of a
// native entry executes, counted by single-stepping it (the floor's compute
// part, bench/floor.h).
//
// A forked child (the JIT code sits at the same address in it) stops under
// ptrace, then calls entry(&args, row_begin, row_end); the parent
// single-steps it and counts every instruction from the entry's first to
// its return, callees included, each classified by decoding its bytes with
// LLVM's x86 disassembler. The child's writes stay in the child. No
// hardware counters are needed, only ptrace; where ptrace is refused the
// result says why instead of counting. x86-64 only.
#pragma once

#include <lanejit/launch_abi.h>

#include <cstdint>
#include <optional>
#include <string>

namespace lanejit::bench {

struct ExecutedInstructions {
  int64_t instructions = 0; // every executed instruction, callees included
  // Those with an xmm/ymm/zmm or mask-register operand: what the vector
  // (SIMD and floating-point) units execute, packed or scalar.
  int64_t vector = 0;
};

struct CountResult {
  std::optional<ExecutedInstructions> counts;
  std::string unavailable; // why there are no counts ("" when there are)
};

// Counts one call of entry(&args, row_begin, row_end). Gives up (counts
// empty) after `max_steps` steps, when ptrace is refused, or when the
// child stops on anything but a step. Never throws for those.
CountResult countExecuted(NativeEntry entry, const LaunchArgs &args, int64_t row_begin,
                          int64_t row_end, int64_t max_steps);

// Whether the x86-64 instruction at the start of `bytes` (up to 15 of
// them) has a vector or mask register operand; nullopt if it does not decode.
std::optional<bool> isVectorInstruction(const uint8_t *bytes, size_t size);

} // namespace lanejit::bench
