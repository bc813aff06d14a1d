// lanejit/verify.h — program-level well-formedness.
//
// Node-level typing is enforced when nodes are made (see ir.h). The verifier
// checks what only the whole program shows: unique names, loads that match
// their input's declaration and stay inside it, writes that stay inside
// their output, are provably disjoint and cover every column. Messages name
// the node (%N as printed) or the declaration and say what is wrong.
#pragma once

#include <lanejit/ir.h>

#include <string>
#include <vector>

namespace lanejit {

// Every problem found; empty when the program is well formed.
std::vector<std::string> verify(const Program &program);
// Throws Error(Kind::Verify) listing the problems.
void verifyOrThrow(const Program &program);

} // namespace lanejit
