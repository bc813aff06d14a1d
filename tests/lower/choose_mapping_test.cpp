// lower::rowLayoutApplies: which programs the rows-across-lanes entry keeps
// in their row-major layout (every column vector spans [0, C), every write
// one whole row) and which it gives one row per lane; the mapping cost
// estimates follow the layout the entry will use.
#include "lower/choose_mapping.h"
#include "lower/lowering_passes.h"

#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(ChooseMapping, RowLayoutForWholeRowProgramsOnly) {
  for (int64_t c : {1, 3, 8, 17, 64}) {
    EXPECT_TRUE(lower::rowLayoutApplies(library::rmsNorm(), c)) << c;
    EXPECT_TRUE(lower::rowLayoutApplies(library::maskedSoftmax(), c)) << c;
    // RoPE reads x[0:C/2] and x[C/2:C]: a slice at an offset.
    EXPECT_FALSE(lower::rowLayoutApplies(library::rope(), 2 * c)) << c;
  }
  EXPECT_FALSE(lower::rowLayoutApplies(library::rmsNorm(), 0));
  EXPECT_FALSE(lower::rowLayoutApplies(library::rmsNorm(), 65)) << "past the reduction lanes";
}

} // namespace
} // namespace lanejit
