// readPrologue: a function's stack frame read from its prologue, for
// objects without a .stack_sizes section (e.g. from g++ or cc).
//
// Counted, from the entry: every push (8 bytes, the frame pointer's and a
// realigning prologue's copy of the return address included) up to the
// first "sub rsp, N" (or "add rsp, -N"), then N. Instructions the compiler schedules in between
// (argument moves, "mov rbp, rsp", "lea r10, [rsp + 8]") are passed over;
// so are conditional branches and returns before the first push (an early
// exit a shrink-wrapped function tests first). The prologue ends at a call,
// an unconditional jump, any other write to rsp, or a branch once it has
// begun. "and rsp, -A" realigns the frame: its padding (0 to A - 8 bytes)
// depends on the caller's rsp, so it is reported as the alignment, not
// counted.
//
// AArch64: every pre-indexed store to sp ("stp x29, x30, [sp, #-32]!") adds
// its decrement, and "sub sp, sp, #N" (", lsl #12": N * 4096) adds N;
// "sub sp, sp, xN" (alloca, a probed frame) makes it unknown. It ends at a
// call, a branch once begun, or a return.
#pragma once

#include "inspect/object_reader.h"

#include <cstdint>

namespace lanejit::inspect {

struct PrologueFrame {
  int64_t bytes = 0;     // -1 when "sub rsp" takes a register (alloca)
  int64_t alignment = 0; // A of "and rsp, -A"; 0 when not realigned
};

PrologueFrame readPrologue(const DecodedFunction &fn, Arch arch = Arch::X86_64);

} // namespace lanejit::inspect
