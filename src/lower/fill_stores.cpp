// fill-stores: a column-bounded traversal stores a row-uniform value into
// the columns past its bound (masked softmax's zeros). LLVM recognises that
// loop of splat stores as a memset and calls the C library once per row,
// which at short rows costs more than the stores (a call, its size checks
// and a return for a few packets). With the switch on the kernel is
// compiled without memset as a builtin, so the fill stays full-packet
// vector stores and one masked store. Same values stored either way.
#include "lower/lowering_passes.h"

namespace lanejit::lower {

LoweringResult fillStores(KernelPlan &plan) {
  int filled = 0;
  for (const Traversal &t : plan.traversals)
    filled += t.bound && !t.writes.empty();
  plan.fill_stores = filled > 0;
  return {plan.fill_stores,
          std::to_string(filled) + " traversals fill past their bound with vector stores"};
}

} // namespace lanejit::lower
