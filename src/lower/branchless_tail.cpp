// branchless-tail: a reduction's tail packet adds into accumulator
// full_packets mod K, a number known only at run time, which the unfused
// form picks by a select per accumulator that LLVM turns into branches and
// register moves.
// - max and min are exactly associative and commutative (IEEE 754-2019
//   maximum/minimum; NaNs are canonical when stored), so their tail simply
//   joins accumulator 0.
// - A sum's tail joins by lane masks: its lanes in its accumulator, none in
//   the others, one merge-masked add per accumulator. A lane left out keeps
//   its value, which is what adding the identity did. That costs K masked
//   steps; worth it only with K <= 4 (W = 16, AVX-512 mask registers) and
//   masks computed once per call, i.e. no column bound (measured, W = 8 on
//   AVX2: masked softmax 527 -> 638 instructions per row with masks; at
//   W = 16 its per-row masks cost ~10% of its time).
// No bit changes either way.
#include "lower/lowering_passes.h"

#include <algorithm>

namespace lanejit::lower {

LoweringResult branchlessTail(KernelPlan &plan) {
  int traversals = 0, masked = 0;
  for (Traversal &t : plan.traversals) {
    traversals += !t.reductions.empty();
    bool summed = std::any_of(t.reductions.begin(), t.reductions.end(), [](const Expr &r) {
      return r->reduceOp() == ReduceOp::Sum || r->reduceOp() == ReduceOp::Mean;
    });
    t.tail_masks =
        summed && !t.bound && plan.accumulators > 1 && plan.accumulators <= kMaskedTailAccumulators;
    masked += t.tail_masks;
  }
  plan.branchless_tail = traversals > 0 && plan.accumulators > 1;
  if (!plan.branchless_tail)
    return {false, "no reduction has more than one accumulator"};
  return {true, "max/min tails join accumulator 0; " + std::to_string(masked) + " of " +
                    std::to_string(traversals) +
                    " reducing traversals add a sum tail by lane masks"};
}

} // namespace lanejit::lower
