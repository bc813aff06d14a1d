// A pass rewrites a Program into an equivalent Program. Passes never change
// what a program computes bit for bit (fast math stays off).
#pragma once

#include <lanejit/ir.h>

namespace lanejit::passes {

struct Pass {
  const char *name;    // the switch name: LANEJIT_DISABLE_PASS=<name>
  const char *summary; // one line for dumps and docs
  Program (*run)(const Program &);
};

// Rebuilds every node bottom-up through `rewrite`, which gets the node with
// already-rewritten operands; shared subgraphs are visited once.
Program rewriteProgram(const Program &program,
                       const std::function<Expr(const Expr &original, std::vector<Expr> args)> &rewrite);

} // namespace lanejit::passes
