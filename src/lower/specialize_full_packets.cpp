// specialize-full-packets: full packets run the body with the constant
// all-on mask; only the tail is masked.
#include "lower/lowering_passes.h"

namespace lanejit::lower {

LoweringResult specializeFullPackets(KernelPlan &plan) {
  for (Traversal &t : plan.traversals)
    t.full = PacketKind::Dense;
  return {!plan.traversals.empty(), std::to_string(plan.traversals.size()) +
                                        " traversals run full packets with the all-on mask"};
}

} // namespace lanejit::lower
