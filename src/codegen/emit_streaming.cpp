// Streaming stores (lower/stream_stores.cpp): a write-only traversal of a
// large call stores its full packets non-temporally. Those stores need
// addresses aligned to the packet (W elements), so each row runs an
// aligning masked packet over its first columns, then full packets, then
// the masked tail. Columns are independent in such a traversal, so where
// the packets fall changes no bit.
#include "codegen/kernel_emitter.h"

namespace lanejit::codegen {

using llvm::Value;

bool KernelEmitter::streams() const {
  return std::any_of(plan_.traversals.begin(), plan_.traversals.end(),
                     [](const lower::Traversal &t) { return t.stream_stores; });
}

void KernelEmitter::emitStreamingPackets(TraversalState &s, Value *live) {
  const lower::Traversal &t = *s.traversal;
  // Its writes all store elements of one size (lower/stream_stores.cpp).
  size_t inputs = program_.inputs.size();
  const int64_t element = bytesOf(program_.outputs[program_.writes[t.writes[0]].output].type);
  const int64_t align = int64_t{lanes_} * element;
  // The call's bytes per output this traversal writes (every row's, not
  // only this thread's block, so all threads decide alike).
  Value *bytes =
      launch_.CreateMul(launch_.CreateMul(rows_, dimValue(t.len)), launch_.getInt64(element));
  Value *bigCall =
      launch_.CreateICmpSGE(bytes, launch_.getInt64(plan_.stream_min_bytes), "big.call");
  // Where each write's row starts, modulo the packet's size: the writes can
  // all be aligned by one shift only when they agree, and only by whole
  // elements.
  Value *mask = b_.getInt64(align - 1);
  Value *first = nullptr, *stream = bigCall;
  for (int wi : t.writes) {
    const Write &w = program_.writes[wi];
    size_t buffer = inputs + w.output;
    Value *start =
        b_.CreateInBoundsGEP(elementType(buffer), rowBase(int(buffer)), dimValue(w.begin));
    Value *offset = b_.CreateAnd(b_.CreatePtrToInt(start, b_.getInt64Ty()), mask);
    if (!first) {
      first = offset;
      stream = b_.CreateAnd(stream,
                            b_.CreateICmpEQ(b_.CreateAnd(offset, b_.getInt64(element - 1)),
                                            b_.getInt64(0)));
    } else {
      stream = b_.CreateAnd(stream, b_.CreateICmpEQ(offset, first));
    }
  }
  stream->setName("stream");
  // Columns before the first aligned address (at most the row) when
  // streaming, else none: one masked head, one dense loop of each kind and
  // one masked tail, in column order.
  Value *lead = b_.CreateUDiv(b_.CreateAnd(b_.CreateSub(b_.getInt64(align), first), mask),
                              b_.getInt64(element));
  lead = b_.CreateSelect(b_.CreateICmpULT(lead, live), lead, live);
  lead = b_.CreateSelect(stream, lead, b_.getInt64(0), "stream.lead");
  emitIf(b_.CreateICmpNE(lead, b_.getInt64(0)), "stream.head",
         [&] { emitPacket(s, lower::PacketKind::Masked, b_.getInt64(0), lead, b_.getInt64(0)); });
  Value *full = b_.CreateUDiv(b_.CreateSub(live, lead), b_.getInt64(lanes_), "stream.full");
  auto denseLoop = [&](const char *name) {
    emitLoop(b_.getInt64(0), full, name, [&](Value *p) {
      Value *column = b_.CreateAdd(lead, b_.CreateMul(p, b_.getInt64(lanes_)));
      emitPacket(s, lower::PacketKind::Dense, column, live, b_.getInt64(0));
    });
  };
  emitIfElse(
      stream, "stream",
      [&] {
        packets_.setStreamingAlignment(align);
        denseLoop("stream.packets");
        packets_.setStreamingAlignment(0);
      },
      [&] { denseLoop("packets"); });
  Value *tail = b_.CreateAdd(lead, b_.CreateMul(full, b_.getInt64(lanes_)));
  emitIf(b_.CreateICmpULT(tail, live), "tail",
         [&] { emitPacket(s, lower::PacketKind::Masked, tail, live, b_.getInt64(0)); });
}

} // namespace lanejit::codegen
