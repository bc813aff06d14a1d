// hoist-guards: alias guards evaluated once per entry call.
#include "lower/lowering_passes.h"

namespace lanejit::lower {

LoweringResult hoistGuards(KernelPlan &plan) {
  // A guard reads buffer addresses and row strides: launch-uniform values
  // (the uniformity analysis's Launch scope), fixed for the whole call.
  plan.hoist_guards = true;
  size_t n = plan.guardedInputs().size();
  return {n > 0, std::to_string(n) + " alias guards evaluated once per entry call"};
}

} // namespace lanejit::lower
