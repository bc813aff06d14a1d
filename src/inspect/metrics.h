// measureFunction: a decoded function's metrics (lanejit/inspect.h).
//
// Memory operations are classified from the Intel-syntax operand text: the
// operand's size keyword (xmmword/ymmword/zmmword = a whole vector, byte to
// qword = scalar), a {kN} lane mask or a vmaskmov mnemonic (masked), {1toN}
// or vbroadcast (broadcast), vgather/vscatter, and rsp/rbp addressing
// (stack). Loops are backward branches; packet bodies are told apart by
// whether the innermost loops' vector memory operations carry a lane mask.
#pragma once

#include "inspect/object_reader.h"

#include <lanejit/inspect.h>

namespace lanejit::inspect {

FunctionReport measureFunction(const DecodedFunction &fn, const DecodedObject &object);

} // namespace lanejit::inspect
