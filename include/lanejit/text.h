// lanejit/text.h — the textual form of a Program (grammar: docs/text-format.md).
//
// print() is canonical: nodes are numbered %0, %1, ... in the order
// forEachNode visits them, so parse(print(p)) prints back identically and
// has the same structural hash. parse() reports the first problem as
// "source:line:column: message" in an Error(Kind::Parse); it never crashes
// or hangs on malformed input and verifies the program it returns.
#pragma once

#include <lanejit/ir.h>

#include <string>
#include <string_view>

namespace lanejit {

std::string print(const Program &program);
// The printed form of one node's operation, e.g. "load x[0:C/2]".
std::string printNode(const Node &node, const Program &program,
                      const std::function<std::string(const Expr &)> &operandName);

Program parse(std::string_view text, std::string_view source_name = "<input>");
Program parseFile(const std::string &path);

} // namespace lanejit
