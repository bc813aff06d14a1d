// prefetch-next-row: a row whose inputs are read by two or more traversals
// streams them from memory in its first traversal and finds them in the
// cache after that. The hardware prefetcher does not run ahead across the
// row boundary (the later traversals jump back to the row's start), so on
// calls larger than the cache each row's first traversal waits for memory.
// Prefetching the next row during the traversal before the last gives the
// lines one traversal's time to arrive. Measured on the project's Zen 4
// with hand-written kernels (1024 x 4097): LayerNorm 0.80-0.82 of the time
// without (prefetching in its last traversal: 0.88-0.92, in its first:
// 0.95-0.98), RMSNorm 0.82; but 1.12-1.28x slower on calls of 1-8 MiB that
// the caches hold, where the prefetches only take load slots, hence the
// call-size gate. And a row gate, measured with lanejit's kernels (prefetch
// on / off, calls of 32-64 MiB): short rows cross into the next one in the
// hardware prefetcher's stream (65 and 256 columns: 0.99-1.01). Where the
// prefetching traversal is the row's first (rows of two traversals), it
// streams the row from memory itself and the prefetches compete with its
// loads: RMSNorm 1.01-1.03 at 512 columns, 1.04-1.09 at 1024, 0.97-0.99 at
// 2048, 0.84-0.85 at 4097; a later traversal reads the cache and has load
// slots to spare: LayerNorm 0.84 at 512, 0.78 at 1024, 0.74-0.80 at 2048,
// masked softmax 0.67 at 512, 0.88 at 1024. A traversal over fewer columns
// than the row (a group's C/32 results) would spread the prefetches over
// only that many columns, so only traversals of the most columns are
// candidates: the last of them before the final traversal, else in rows of
// three or more traversals the final one, else the first. Q8_0 (C, C/32,
// C): the final one, which reads the cache (quantize_q8_0, 1024 x 4096, 1
// thread, Xeon: 1.17 ms with the prefetches spread over the C/32 columns,
// 1.00 with them in the final traversal). Values are untouched.
#include "lower/lowering_passes.h"

namespace lanejit::lower {
namespace {

// Shortest rows that prefetch: when the prefetching traversal is a later
// one, and when it is the row's first (see above).
constexpr int64_t kMinRowBytes = 2048;
constexpr int64_t kMinRowBytesFromFirst = 16384;

} // namespace

LoweringResult prefetchNextRow(KernelPlan &plan, int64_t min_bytes) {
  int n = static_cast<int>(plan.traversals.size());
  for (Traversal &t : plan.traversals) {
    t.prefetch_next_row = false;
    t.prefetch_min_row_bytes = 0;
  }
  // A flattened plan has one traversal; a row of one traversal streams
  // through memory in order, which the hardware prefetcher follows.
  if (n < 2 || plan.flatten_rows)
    return {false, "rows of one traversal: nothing to prefetch ahead of"};
  bool rowInputs = false;
  for (const Param &p : plan.program.inputs)
    rowInputs |= p.kind == ParamKind::RowTensor;
  if (!rowInputs)
    return {false, "no row-tensor inputs"};
  // Columns per C of a traversal: a/d of its length (a*C+b)/d.
  auto wider = [](const Dim &x, const Dim &y) {
    return x.coeff() * y.denom() > y.coeff() * x.denom();
  };
  int widest = 0;
  for (int i = 1; i < n; ++i)
    if (wider(plan.traversals[i].len, plan.traversals[widest].len))
      widest = i;
  auto isWidest = [&](int i) {
    return !wider(plan.traversals[widest].len, plan.traversals[i].len);
  };
  // The last widest between the first and the final traversal; else, in
  // rows of three or more, the final one if it is widest (it reads the
  // cache, as a middle one would); else the first.
  int chosen = -1;
  for (int i = 1; i < n - 1; ++i)
    if (isWidest(i))
      chosen = i;
  if (chosen < 0)
    chosen = n > 2 && isWidest(n - 1) ? n - 1 : 0;
  Traversal &t = plan.traversals[chosen];
  // A traversal of fixed length (a per-row scalar) has no columns to
  // spread the prefetches over.
  if (t.len.coeff() == 0)
    return {false, "the traversals before the last have a fixed length"};
  t.prefetch_next_row = true;
  t.prefetch_min_row_bytes = chosen == 0 ? kMinRowBytesFromFirst : kMinRowBytes;
  plan.prefetch_min_bytes = min_bytes;
  return {true, "traversal " + std::to_string(chosen) +
                    " prefetches the next row's inputs in calls of at least " +
                    std::to_string(min_bytes) + " bytes of row data, rows of at least " +
                    std::to_string(t.prefetch_min_row_bytes) + " bytes"};
}

} // namespace lanejit::lower
