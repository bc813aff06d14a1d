// stream-stores: a large output is written once and not read again from the
// cache, so a normal store only costs a read of each line before it is
// overwritten (write-allocate) and evicts data the kernel still needs.
// Non-temporal stores skip both: measured on the project's Zen 4, a 16 MiB
// in / 16 MiB out pass ran 1.5x faster with them, and no slower at 4 MiB.
// They need whole aligned packets, so only traversals whose full packets
// are dense and whose columns are independent (no reductions: packet
// boundaries fix a sum's association) qualify; codegen shortens each row's
// first packet to align the rest. The stored values are the same.
#include "lower/lowering_passes.h"

namespace lanejit::lower {
namespace {

// One shift aligns all of a traversal's stores only if their elements are
// of one size (f32 and bf16 outputs in one traversal are not streamed).
bool sameElementSize(const Program &p, const Traversal &t) {
  for (int w : t.writes)
    if (bytesOf(p.outputs[p.writes[w].output].type) !=
        bytesOf(p.outputs[p.writes[t.writes[0]].output].type))
      return false;
  return true;
}

} // namespace

LoweringResult streamStores(KernelPlan &plan, int64_t min_bytes) {
  int streamed = 0;
  for (Traversal &t : plan.traversals) {
    // A traversal of fixed length (a per-row scalar) is never large.
    t.stream_stores = !t.writes.empty() && t.reductions.empty() && !t.bound &&
                      t.full == PacketKind::Dense && t.inline_bodies && t.len.coeff() != 0 &&
                      sameElementSize(plan.program, t);
    streamed += t.stream_stores;
  }
  plan.stream_min_bytes = min_bytes;
  return {streamed > 0, std::to_string(streamed) +
                            " write-only traversals store full packets non-temporally in calls "
                            "writing at least " +
                            std::to_string(min_bytes) + " bytes per output"};
}

} // namespace lanejit::lower
