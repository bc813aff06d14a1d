// What a lanejit variant claims, and the check of a compile report against
// it: built from the claims table, failing when the report disagrees.
#include "claims.h"
#include "variants.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace lanejit::bench {
namespace {

bool hasClaim(const std::vector<Claim> &claims, const std::string &stat,
              const std::string &relation, int64_t value) {
  return std::any_of(claims.begin(), claims.end(), [&](const Claim &c) {
    return c.stat == stat && c.relation == relation && c.value == value;
  });
}

TEST(BenchClaims, SpecializationOnClaimsDenseBodiesWhenAFullPacketFits) {
  CompileOptions on;
  std::vector<Claim> claims = claimsFor(on, 65, 16);
  EXPECT_TRUE(hasClaim(claims, "lanes", "==", 16));
  EXPECT_TRUE(hasClaim(claims, "specialized_bodies", ">", 0));
  EXPECT_FALSE(hasClaim(claims, "specialized_bodies", "==", 0));
}

TEST(BenchClaims, SpecializationOnClaimsNoDenseBodyWhenRowsAreShorterThanAPacket) {
  CompileOptions on;
  std::vector<Claim> claims = claimsFor(on, 7, 8);
  EXPECT_TRUE(hasClaim(claims, "lanes", "==", 8));
  EXPECT_FALSE(hasClaim(claims, "specialized_bodies", ">", 0));
}

TEST(BenchClaims, SpecializationOffClaimsZeroDenseBodies) {
  CompileOptions off;
  off.specialize_full_packets = false;
  EXPECT_TRUE(hasClaim(claimsFor(off, 65, 16), "specialized_bodies", "==", 0));
}

TEST(BenchClaims, FusionClaimsFollowTheSwitches) {
  CompileOptions on;
  // materialize-or-recompute, when on, may store a re-read value.
  on.materialize_or_recompute = true;
  EXPECT_FALSE(hasClaim(claimsFor(on, 65, 16), "materialized_buffers", "==", 0));
  on.materialize_or_recompute = false;
  EXPECT_TRUE(hasClaim(claimsFor(on, 65, 16), "materialized_buffers", "==", 0));
  EXPECT_FALSE(hasClaim(claimsFor(on, 65, 16), "fused_regions", "==", 0));
  CompileOptions off;
  off.fuse_pointwise = off.fuse_reductions = off.fuse_outputs = false;
  EXPECT_TRUE(hasClaim(claimsFor(off, 65, 16), "fused_regions", "==", 0));
  EXPECT_FALSE(hasClaim(claimsFor(off, 65, 16), "materialized_buffers", "==", 0));
  CompileOptions helpers;
  helpers.inline_packet_bodies = CompileOptions::Inline::Never;
  EXPECT_TRUE(hasClaim(claimsFor(helpers, 65, 16), "inlined_bodies", "==", 0));
}

TEST(BenchClaims, AReportThatAgreesHolds) {
  CompileReport report;
  report.mapping.lanes = 16;
  report.specialized_bodies = 2;
  CompileOptions options;
  options.materialize_or_recompute = false;
  std::vector<CheckedClaim> checked = checkClaims(claimsFor(options, 65, 16), report);
  ASSERT_EQ(checked.size(), 3u); // lanes, specialized bodies, nothing materialized
  EXPECT_TRUE(allHold(checked));
  EXPECT_EQ(checked[1].observed, 2);
}

TEST(BenchClaims, AReportThatDisagreesFails) {
  CompileOptions off;
  off.specialize_full_packets = false;
  off.materialize_or_recompute = false;
  CompileReport report;
  report.mapping.lanes = 16;
  report.specialized_bodies = 1; // specialization was supposed to be off
  EXPECT_FALSE(allHold(checkClaims(claimsFor(off, 65, 16), report)));
  report.specialized_bodies = 0;
  report.mapping.lanes = 8; // asked for 16
  EXPECT_FALSE(allHold(checkClaims(claimsFor(off, 65, 16), report)));
  report.mapping.lanes = 16;
  report.materialized_buffers = 3; // fusion was on
  EXPECT_FALSE(allHold(checkClaims(claimsFor(off, 65, 16), report)));
}

TEST(BenchClaims, RealKernelsMatchTheirClaims) {
  for (bool spec : {true, false})
    for (bool fuse : {true, false}) {
      CompileOptions options;
      options.lanes = 8;
      options.specialize_full_packets = spec;
      options.fuse_pointwise = options.fuse_reductions = options.fuse_outputs = fuse;
      for (const library::Entry &e : library::all()) {
        Kernel kernel = compile(e.make(), options);
        EXPECT_TRUE(allHold(checkClaims(claimsFor(options, 66, 8), kernel.report())))
            << e.name << " specialization " << spec << " fusion " << fuse;
      }
    }
}

TEST(BenchClaims, TheLanesClaimIsTheWidestOfTheTargetCompiledFor) {
  // The target is what the options name, not the machine running the
  // bench: a named CPU, or the host with features turned off.
  CompileOptions v3, v4, avx2;
  v3.target_cpu = "x86-64-v3";
  v4.target_cpu = "x86-64-v4";
  avx2.target_features = "-avx512f";
  EXPECT_EQ(widestLanes(v3), 8);
  EXPECT_EQ(widestLanes(v4), 16);
  for (const CompileOptions &o : {v3, v4, avx2}) {
    Kernel k = compile(library::rope(), o);
    SCOPED_TRACE(k.report().cpu + " " + k.report().features);
    EXPECT_EQ(widestLanes(k.report().features), k.report().mapping.lanes);
    EXPECT_EQ(widestLanes(o), k.report().mapping.lanes);
    EXPECT_TRUE(allHold(checkClaims(claimsFor(o, 66, widestLanes(o)), k.report())));
  }
  EXPECT_EQ(widestLanes("+avx,+avx2,-avx512f"), 8);
  EXPECT_EQ(widestLanes("-avx,+sse4.2"), 4);
  EXPECT_EQ(widestLanes("+avx512f"), 16);
}

TEST(BenchClaims, RelationsAndStatsAreCheckedByName) {
  EXPECT_TRUE(relationHolds(3, ">=", 3));
  EXPECT_FALSE(relationHolds(3, "<", 3));
  EXPECT_TRUE(relationHolds(2, "!=", 3));
  EXPECT_THROW(relationHolds(1, "~", 1), Error);
  EXPECT_THROW(statValue(CompileReport{}, "fused_loops"), Error);
  EXPECT_EQ(statValue(CompileReport{}, "fused_regions"), 0);
}

} // namespace
} // namespace lanejit::bench
