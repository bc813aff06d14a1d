// lower::rowLayoutApplies: which programs the rows-across-lanes entry keeps
// in their row-major layout (every column vector spans [0, C), every write
// one whole row) and which it gives one row per lane; the mapping cost
// estimates follow the layout the entry will use.
#include "lower/choose_mapping.h"
#include "lower/lowering_passes.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>
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

// Group and repeat nodes read the workspace, which the rows-across-lanes
// entry does not have: the mapping never picks it for them, and a dump that
// asks for that entry is refused with the reason instead of failing inside
// the emitter.
TEST(ChooseMapping, GroupingProgramsHaveNoRowsAcrossLanesEntry) {
  EXPECT_EQ(lower::rowsAcrossLanesUnavailable(library::rmsNorm()), "");
  for (const char *name : {"quantize_q8_0", "rmsnorm_q8_0"}) {
    Program p = library::byName(name);
    EXPECT_NE(lower::rowsAcrossLanesUnavailable(p), "") << name;
    Kernel k = compile(p);
    EXPECT_EQ(k.report().mapping.rows_across_lanes_max_cols, 0) << name;
    try {
      (void)k.dumpRowsAcrossLanes("asm", 32);
      ADD_FAILURE() << name << ": dumped";
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Compile) << name;
      EXPECT_NE(std::string(e.what()).find("groups or repeats columns"), std::string::npos)
          << e.what();
    }
  }
}

} // namespace
} // namespace lanejit
