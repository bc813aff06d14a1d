// measureFunction: a decoded function's metrics (lanejit/inspect.h).
//
// Memory operations are classified from the instruction text. x86-64
// (Intel syntax): the operand's size keyword (xmmword/ymmword/zmmword = a
// whole vector, byte to qword = scalar), a {kN} lane mask or a vmaskmov
// mnemonic (masked), {1toN} or vbroadcast (broadcast), vgather/vscatter,
// rsp/rbp addressing (stack), rip (constant). AArch64: the data register
// (q or a multi-lane vN.4s: vector; a lane, {vN.s}[i]: masked, NEON's
// per-lane piece of a masked access; ld1r: broadcast; else scalar), sp/x29
// addressing (stack), a lo12 relocation or an adrp's page (constant).
// Loops are the natural loops of the function's control flow; packet
// bodies are told apart by whether the innermost loops' vector memory
// operations carry a lane mask.
#pragma once

#include "inspect/mca.h"
#include "inspect/object_reader.h"

#include <lanejit/inspect.h>

#include <string>

namespace lanejit::inspect {

// With `mca`, each innermost loop gets llvm-mca's cycles per iteration;
// the first reason one could not is left in `mcaProblem`.
FunctionReport measureFunction(const DecodedFunction &fn, const DecodedObject &object,
                               const McaModel *mca = nullptr, std::string *mcaProblem = nullptr);

} // namespace lanejit::inspect
