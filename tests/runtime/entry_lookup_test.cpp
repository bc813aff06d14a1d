// Kernel::nativeEntry(R, C), the look-up behind runEntry and run(): a
// thread keeps the last settled entry it found, so repeated calls skip the
// tuned, rows-across-lanes and C tables. What it returns must still follow
// the kernel and the class of shape on every call.
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(EntryLookup, RepeatedLookUpsFollowTheKernelAndTheShape) {
  Kernel rms = compile(library::rmsNorm(), test::targetOptions());
  Kernel ln = compile(library::layerNorm(), test::targetOptions());
  // Before: one entry per class of call, found through the tables.
  NativeEntry narrow = rms.nativeEntry(4096, 8); // rows across lanes
  NativeEntry few = rms.nativeEntry(2, 8);       // packet-local, C = 8
  NativeEntry wider = rms.nativeEntry(4096, 9);
  ASSERT_NE(narrow, nullptr);
  EXPECT_NE(narrow, few);
  EXPECT_NE(narrow, wider);
  // Repeated and interleaved look-ups: the same answers.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rms.nativeEntry(4096, 8), narrow);
    EXPECT_EQ(rms.nativeEntry(5000, 8), narrow) << "same class of R";
    EXPECT_EQ(rms.nativeEntry(2, 8), few);
    EXPECT_NE(ln.nativeEntry(4096, 8), narrow) << "another kernel";
    EXPECT_EQ(rms.nativeEntry(4096, 9), wider);
  }
}

} // namespace
} // namespace lanejit
