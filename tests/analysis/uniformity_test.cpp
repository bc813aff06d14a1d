// Uniformity: which values are per launch, per row, per lane.
#include <lanejit/dsl.h>

#include "analysis/uniformity.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

using analysis::Uniformity;

TEST(Uniformity, ClassifiesLaunchRowAndLaneValues) {
  ProgramBuilder b("p");
  Expr x = b.rows("x");
  Expr eps = b.scalar("eps");
  Expr launch = eps * 2.0f;          // scalar input and a constant
  Expr perRow = mean(x) + launch;    // a reduction
  Expr index = row() % dim(Dim::C()); // row index
  Expr lane = x * perRow;            // a load
  b.output("y", select(col() <= index, lane, launch));
  Program p = b.build();
  analysis::UniformityInfo u = analysis::analyzeUniformity(p);
  EXPECT_EQ(u.of(launch), Uniformity::Launch);
  EXPECT_EQ(u.of(perRow), Uniformity::Row);
  EXPECT_EQ(u.of(index), Uniformity::Row);
  EXPECT_EQ(u.of(lane), Uniformity::Lane);
  EXPECT_EQ(u.of(p.writes[0].value), Uniformity::Lane);
}

} // namespace
} // namespace lanejit
