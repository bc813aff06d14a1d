// The compile report states what was realized. Counts asserted for the six
// library programs (W = 16, default switches), and each switch's effect.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lanejit {
namespace {

CompileReport reportOf(const Program &p, CompileOptions o = {}) {
  if (o.lanes == 0)
    o.lanes = 16;
  return compile(p, o).report();
}

struct Expected {
  const char *program;
  int traversals, fused_regions, loads, masked_loads, stores, masked_stores;
  int specialized, masked, proved, math;
  int materialized = 0;
};

// Loads and stores count every emitted body copy: a reduction traversal
// with K = 64/W accumulators emits K dense copies in the group loop, one in
// the loop over leftover packets (leftover_loop) and one masked tail
// (docs/architecture.md, Reductions); LayerNorm at W = 16: 5 dense + 1
// masked per reduction pass, 1 + 1 for the write pass.
constexpr Expected kExpected[] = {
    // RoPE: one traversal of C/2 writes both halves; 4 loads + 2 stores per body.
    {"rope", 1, 1, 8, 4, 4, 2, 1, 1, 3, 0},
    // LayerNorm: mean pass, centered variance pass, write pass.
    {"layernorm", 3, 2, 18, 5, 2, 1, 11, 3, 1, 0},
    {"swiglu", 1, 1, 4, 2, 2, 1, 1, 1, 2, 2},
    {"rmsnorm", 2, 1, 10, 3, 2, 1, 6, 2, 1, 0},
    {"gelu_residual", 1, 1, 4, 2, 2, 1, 1, 1, 2, 2},
    // max pass, exp-sum pass (5 + 1 exp copies, each storing exp to the
    // workspace: materialize-or-recompute), write pass (1 + 1, loading it).
    {"masked_softmax", 3, 3, 14, 3, 8, 2, 11, 3, 1, 6, 1},
};

// The counts above are without streaming stores (their copies are counted
// by StreamingAddsOneDenseAndOneMaskedCopy).
CompileOptions withoutStreaming() {
  CompileOptions o;
  o.stream_stores = false;
  o.materialize_or_recompute = true; // softmax's exp stored, as the counts say
  return o;
}

TEST(CompileReport, LibraryCountsAtW16) {
  for (const Expected &e : kExpected) {
    SCOPED_TRACE(e.program);
    CompileReport r = reportOf(library::byName(e.program), withoutStreaming());
    EXPECT_EQ(r.mapping.lanes, 16);
    EXPECT_EQ(r.mapping.local_lanes, 16);
    EXPECT_EQ(r.mapping.block_rows, 32);
    EXPECT_EQ(static_cast<int>(r.traversals.size()), e.traversals);
    EXPECT_EQ(r.fused_regions, e.fused_regions);
    EXPECT_EQ(r.materialized_buffers, e.materialized);
    EXPECT_EQ(r.loads, e.loads);
    EXPECT_EQ(r.masked_loads, e.masked_loads);
    EXPECT_EQ(r.stores, e.stores);
    EXPECT_EQ(r.masked_stores, e.masked_stores);
    EXPECT_EQ(r.specialized_bodies, e.specialized);
    EXPECT_EQ(r.masked_bodies, e.masked);
    EXPECT_EQ(r.guards_proved_unnecessary, e.proved);
    EXPECT_EQ(r.guards_emitted, 0);
    EXPECT_EQ(r.helper_functions, 0);
    EXPECT_EQ(r.inlined_bodies, e.specialized + e.masked);
    EXPECT_EQ(r.math_expansions, e.math);
  }
}

// A streamed traversal emits its body once more as a dense copy (the loop of
// non-temporal stores) and once more masked (the aligning head).
TEST(CompileReport, StreamingAddsOneDenseAndOneMaskedCopy) {
  for (const Expected &e : kExpected) {
    SCOPED_TRACE(e.program);
    Program p = library::byName(e.program);
    CompileOptions streaming = withoutStreaming();
    streaming.stream_stores = true;
    CompileReport off = reportOf(p, withoutStreaming()), on = reportOf(p, streaming);
    int streamed = e.program == std::string("masked_softmax") ? 0 : 1; // its writes fill
    EXPECT_EQ(on.specialized_bodies, off.specialized_bodies + streamed);
    EXPECT_EQ(on.masked_bodies, off.masked_bodies + streamed);
    // Each copy stores the traversal's writes (RoPE's two halves).
    int writes = streamed * (e.program == std::string("rope") ? 2 : 1);
    EXPECT_EQ(on.stores, off.stores + 2 * writes);
    EXPECT_EQ(on.masked_stores, off.masked_stores + writes);
  }
}

TEST(CompileReport, UnjoinedRopeEmitsHoistedGuards) {
  CompileOptions o;
  o.fuse_outputs = false;
  CompileReport r = reportOf(library::rope(), o);
  EXPECT_EQ(r.traversals.size(), 2u);
  EXPECT_EQ(r.guards_emitted, 3); // x, cos, sin against y
  EXPECT_EQ(r.guards_hoisted, 3);
  EXPECT_EQ(r.staging_buffers, 3);
  EXPECT_EQ(r.guards_proved_unnecessary, 0);
  o.hoist_guards = false;
  CompileReport perRow = reportOf(library::rope(), o);
  EXPECT_EQ(perRow.guards_emitted, 3);
  EXPECT_EQ(perRow.guards_hoisted, 0);
}

TEST(CompileReport, SpecializationOffLeavesNoDenseBody) {
  CompileOptions o;
  o.specialize_full_packets = false;
  for (const library::Entry &e : library::all()) {
    CompileReport r = reportOf(e.make(), o);
    EXPECT_EQ(r.specialized_bodies, 0) << e.name;
    EXPECT_EQ(r.masked_loads, r.loads) << e.name;
    for (const CompileReport::Traversal &t : r.traversals)
      EXPECT_FALSE(t.dense_full_packets) << e.name;
  }
}

TEST(CompileReport, FusionOffMaterializesEveryElementwiseResult) {
  CompileOptions o;
  o.fuse_pointwise = false;
  o.fuse_reductions = false;
  CompileReport r = reportOf(library::swiglu(), o);
  EXPECT_EQ(r.materialized_buffers, 5); // neg, exp, +1, div, mul
  EXPECT_EQ(r.traversals.size(), 6u);
  EXPECT_EQ(r.fused_regions, 0);
  EXPECT_GT(r.workspace_stores, 0);
  EXPECT_GT(r.workspace_loads, 0);
  // Reduction fusion alone: LayerNorm's (x - mean)^2 is stored, then summed.
  CompileOptions red;
  red.fuse_reductions = false;
  CompileReport ln = reportOf(library::layerNorm(), red);
  EXPECT_EQ(ln.materialized_buffers, 1);
  EXPECT_EQ(ln.traversals.size(), 4u);
}

TEST(CompileReport, ForcedHelpersAreCalledNotInlined) {
  CompileOptions o;
  o.inline_packet_bodies = CompileOptions::Inline::Never;
  CompileReport r = reportOf(library::layerNorm(), o);
  EXPECT_EQ(r.helper_functions, 6); // dense + masked per traversal
  EXPECT_EQ(r.inlined_bodies, 0);
  EXPECT_EQ(r.helper_calls, 14); // the 14 inlined copies above, as calls
  for (const CompileReport::Traversal &t : r.traversals)
    EXPECT_FALSE(t.inlined);
}

TEST(CompileReport, MaskedSoftmaxStopsAtTheLastValidColumn) {
  CompileReport on = reportOf(library::maskedSoftmax());
  for (const CompileReport::Traversal &t : on.traversals)
    EXPECT_TRUE(t.bounded);
  CompileOptions o;
  o.bound_masked_columns = false;
  for (const CompileReport::Traversal &t : reportOf(library::maskedSoftmax(), o).traversals)
    EXPECT_FALSE(t.bounded);
  for (const char *other : {"rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual"})
    for (const CompileReport::Traversal &t : reportOf(library::byName(other)).traversals)
      EXPECT_FALSE(t.bounded) << other;
}

TEST(CompileReport, ListsEveryPassAndWhatItDid) {
  CompileReport r = reportOf(library::rope());
  std::vector<std::string> names;
  for (const CompileReport::Pass &p : r.passes)
    names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "eliminate-slices", "cse", "fuse-pointwise", "fuse-reductions", "fuse-outputs",
                "bound-masked-columns", "materialize-or-recompute", "specialize-full-packets",
                "prove-in-place", "hoist-guards", "choose-inlining", "branchless-tail",
                "flatten-rows", "fill-stores", "stream-stores", "prefetch-next-row"}));
  for (const CompileReport::Pass &p : r.passes)
    if (p.stage == "lower" && p.ran) {
      EXPECT_FALSE(p.what.empty()) << p.name;
    }
}

TEST(CompileReport, JsonCarriesTheCounts) {
  CompileReport r = reportOf(library::rope());
  auto j = nlohmann::json::parse(r.json());
  EXPECT_EQ(j["counts"]["fused_regions"], 1);
  EXPECT_EQ(j["counts"]["loads"], r.loads);
  EXPECT_EQ(j["mapping"]["lanes"], 16);
  EXPECT_EQ(j["alias"].size(), 3u);
  EXPECT_EQ(j["passes"].size(), r.passes.size());
  EXPECT_NE(r.text().find("fused regions 1"), std::string::npos);
}

} // namespace
} // namespace lanejit
