// The plan verifier: what every lowering pass must leave true of a
// KernelPlan, checked after initialPlan() and after every lowering pass
// (driver/pipeline.cpp), as the IR verifier is after every program pass.
// The plan is where the schedule and the alias reasoning live, so a pass
// that breaks an invariant here would otherwise surface as wrong bits.
#pragma once

#include "lower/plan.h"

#include <string>
#include <vector>

namespace lanejit::lower {

// Every broken invariant, one line each; empty when the plan is sound:
//  - W is 4, 8 or 16 and W x accumulators = kReductionLanes;
//  - every write and every reduction of the program is done by exactly one
//    traversal, every workspace value is materialized by exactly one, and
//    nothing else is;
//  - what a traversal computes has the traversal's length;
//  - traversals run in order of depth, and each reads only reductions and
//    workspace values that earlier traversals finished;
//  - writes into one output that share a traversal are provably disjoint;
//  - one alias decision per (input, output) pair, staged by the caller
//    exactly when the input is not a row tensor, and every pair called
//    proved in place still passes the in-place proof;
//  - a column bound has one fill per write and a row- or launch-uniform
//    i32 limit.
std::vector<std::string> verifyPlan(const KernelPlan &plan);

// Throws Error(Kind::Compile) naming `after` (the pass that ran last) and
// every problem verifyPlan() found.
void verifyPlanOrThrow(const KernelPlan &plan, const std::string &after);

} // namespace lanejit::lower
