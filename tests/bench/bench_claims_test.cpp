// What a lanejit variant claims, and the check of a compile report against
// it: built from the claims table, failing when the report disagrees.
#include "claims.h"

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
  EXPECT_TRUE(hasClaim(claims, "dense_bodies", ">", 0));
  EXPECT_FALSE(hasClaim(claims, "dense_bodies", "==", 0));
}

TEST(BenchClaims, SpecializationOnClaimsNoDenseBodyWhenRowsAreShorterThanAPacket) {
  CompileOptions on;
  std::vector<Claim> claims = claimsFor(on, 7, 8);
  EXPECT_TRUE(hasClaim(claims, "lanes", "==", 8));
  EXPECT_FALSE(hasClaim(claims, "dense_bodies", ">", 0));
}

TEST(BenchClaims, SpecializationOffClaimsZeroDenseBodies) {
  CompileOptions off;
  off.specialize_full_packets = false;
  EXPECT_TRUE(hasClaim(claimsFor(off, 65, 16), "dense_bodies", "==", 0));
}

TEST(BenchClaims, AReportThatAgreesHolds) {
  CompileStats stats;
  stats.lanes = 16;
  stats.dense_bodies = 2;
  std::vector<CheckedClaim> checked = checkClaims(claimsFor(CompileOptions{}, 65, 16), stats);
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_TRUE(allHold(checked));
  EXPECT_EQ(checked[1].observed, 2);
}

TEST(BenchClaims, AReportThatDisagreesFails) {
  CompileOptions off;
  off.specialize_full_packets = false;
  CompileStats stats;
  stats.lanes = 16;
  stats.dense_bodies = 1; // specialization was supposed to be off
  EXPECT_FALSE(allHold(checkClaims(claimsFor(off, 65, 16), stats)));
  stats.dense_bodies = 0;
  stats.lanes = 8; // asked for 16
  EXPECT_FALSE(allHold(checkClaims(claimsFor(off, 65, 16), stats)));
}

TEST(BenchClaims, RealKernelsMatchTheirClaims) {
  for (bool spec : {true, false}) {
    CompileOptions options;
    options.lanes = 8;
    options.specialize_full_packets = spec;
    Kernel kernel = compile(library::layerNorm(), options);
    EXPECT_TRUE(allHold(checkClaims(claimsFor(options, 65, 8), kernel.stats())))
        << "specialization " << (spec ? "on" : "off");
  }
}

TEST(BenchClaims, RelationsAndStatsAreCheckedByName) {
  EXPECT_TRUE(relationHolds(3, ">=", 3));
  EXPECT_FALSE(relationHolds(3, "<", 3));
  EXPECT_TRUE(relationHolds(2, "!=", 3));
  EXPECT_THROW(relationHolds(1, "~", 1), Error);
  EXPECT_THROW(statValue(CompileStats{}, "fused_loops"), Error);
}

} // namespace
} // namespace lanejit::bench
