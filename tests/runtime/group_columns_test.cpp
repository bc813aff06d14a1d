// Group and repeat nodes: reductions over runs of g columns and their
// inverse shape (what ggml's Q8_0 blocks need).
//
//  - group.sum/mean/max/min and repeat for g = 1 .. 128 (unrolled runs and
//    the loop past 32 columns), at W = 4, 8 and 16, against the oracle, with
//    the same bits for every W, thread count and switch set (a run is
//    combined left to right, so a sum's association does not depend on W);
//  - slices of groups and repeats, a long row split across threads, the
//    plan keeping their operands in the workspace;
//  - the errors: a C that the group does not divide, bad operands, bad text.
#include "support/output_bits.h"
#include "support/testing.h"

#include "launch/row_launch.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <string>
#include <vector>

namespace lanejit {
namespace {

constexpr int kLanes[] = {4, 8, 16};

CompileOptions withLanes(int lanes) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  return o;
}

// y = x + repeat(group(x)), and the groups themselves as a second output.
Program groupProgram(ReduceOp op, int64_t g) {
  ProgramBuilder b("group_" + std::string(name(op)) + "_" + std::to_string(g));
  Expr x = b.rows("x");
  Expr runs = ir::group(op, x * x - 0.5f, g);
  b.output("y", x + repeat(runs, g));
  b.output("runs", runs);
  return b.build();
}

std::vector<std::pair<std::string, CompileOptions>> sweep() {
  std::vector<std::pair<std::string, CompileOptions>> all;
  for (int lanes : kLanes) {
    all.emplace_back("W=" + std::to_string(lanes), withLanes(lanes));
    CompileOptions off = withLanes(lanes);
    off.fuse_pointwise = off.fuse_reductions = off.fuse_outputs = false;
    off.specialize_full_packets = off.specialize_columns = false;
    off.inline_packet_bodies = CompileOptions::Inline::Never;
    all.emplace_back("W=" + std::to_string(lanes) + " unfused, generic", off);
  }
  CompileOptions streaming = withLanes(8);
  streaming.stream_stores = true;
  streaming.stream_min_kib = 0;
  all.emplace_back("W=8 streaming stores", streaming);
  return all;
}

class GroupColumns : public ::testing::TestWithParam<std::tuple<ReduceOp, int64_t>> {};

TEST_P(GroupColumns, MatchTheOracleWithTheSameBitsEverywhere) {
  const auto &[op, g] = GetParam();
  Program program = groupProgram(op, g);
  auto configs = sweep();
  std::vector<Kernel> kernels;
  for (const auto &config : configs)
    kernels.push_back(compile(program, config.second));
  for (int64_t runs : {1, 3, 17})
    for (int64_t rows : {1, 5}) {
      SCOPED_TRACE(testing::Message() << rows << " rows of " << runs << " runs");
      check::Case c = check::makeCase(program, {rows, runs * g}, check::Fill::Random, 5, 2);
      test::Outputs want;
      for (size_t k = 0; k < kernels.size(); ++k)
        for (int threads : {1, 2}) {
          launch::CallThreads scope(threads);
          ASSERT_TRUE(test::runMatchesReference(kernels[k], c)) << configs[k].first;
          if (want.empty())
            want = test::outputsOf(c);
          ASSERT_TRUE(test::sameBits(test::outputsOf(c), want))
              << configs[k].first << " threads " << threads;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    OpsAndSizes, GroupColumns,
    ::testing::Combine(::testing::Values(ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max,
                                         ReduceOp::Min),
                       ::testing::Values(int64_t{1}, int64_t{4}, int64_t{8}, int64_t{32},
                                         int64_t{33}, int64_t{128})),
    [](const auto &info) {
      return std::string(name(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param));
    });

TEST(GroupColumnsTest, SlicesOfGroupsAndRepeats) {
  // The upper half of a repeat, and the groups of the upper half.
  ProgramBuilder b("halves");
  Expr x = b.rows("x");
  Dim h = Dim::C() / 2;
  b.output("upper", repeat(groupmax(x, 8), 8).cols(h, Dim::C()));
  b.output("upper_runs", groupsum(x.cols(h, Dim::C()), 8));
  b.output("runs_upper", groupsum(x, 8).cols(Dim::C() / 16, Dim::C() / 8));
  Program p = b.build();
  for (int lanes : kLanes)
    for (int64_t cols : {16, 48, 528}) {
      SCOPED_TRACE(testing::Message() << "W=" << lanes << " C=" << cols);
      EXPECT_TRUE(test::compileAndCheck(p, {7, cols}, withLanes(lanes), check::Fill::Random));
    }
}

TEST(GroupColumnsTest, LongRowsSplitAcrossThreadsKeepTheirBits) {
  Program p = groupProgram(ReduceOp::Sum, 32);
  Kernel k = compile(p, test::targetOptions());
  check::Case c = check::makeCase(p, {2, 32 * 16384}, check::Fill::Random, 9);
  test::Outputs one;
  for (int threads : {1, 2}) {
    launch::CallThreads scope(threads);
    ASSERT_TRUE(test::runMatchesReference(k, c));
    if (threads == 1)
      one = test::outputsOf(c);
    else
      EXPECT_TRUE(test::sameBits(test::outputsOf(c), one));
  }
}

TEST(GroupColumnsTest, ThePlanKeepsTheirOperandsInTheWorkspace) {
  std::string plan = compile(groupProgram(ReduceOp::Max, 32), test::targetOptions()).dump("plan");
  // x*x - 0.5 (%3) is stored by one traversal and read by the group's.
  EXPECT_NE(plan.find("materialize %3"), std::string::npos) << plan;
  EXPECT_NE(plan.find("len C/32, depth 1"), std::string::npos) << plan;
}

TEST(GroupColumnsTest, FusionSwitchesKeepAGroupOperandStoredBeforeItsReaders) {
  // fuse-outputs may join a write to the traversal storing %0 only if no
  // traversal in between stores what the write reads (%1 here).
  Program p = parse("program g {\n  in x: f32[R, C]\n  out m: f32[R, C/4]\n"
                    "  out k: f32[R, C]\n  %x = load x[0:C]\n  %0 = group.sum %x by 4\n"
                    "  %1 = abs %0\n  m[0:C/4] = %1\n  %u = repeat %0 by 4\n  k[0:C] = %u\n}\n");
  for (bool pointwise : {false, true})
    for (bool reductions : {false, true}) {
      CompileOptions o = test::targetOptions();
      o.fuse_pointwise = pointwise;
      o.fuse_reductions = reductions;
      SCOPED_TRACE(testing::Message() << pointwise << reductions);
      EXPECT_TRUE(test::compileAndCheck(p, {3, 40}, o, check::Fill::Random));
    }
}

TEST(GroupColumnsTest, ACountTheGroupDoesNotDivideIsABindError) {
  Kernel k = compile(groupProgram(ReduceOp::Max, 32), test::targetOptions());
  std::vector<float> x(2 * 40, 1.0f), y(2 * 40), runs(2);
  try {
    k.run({BufferRef::matrix(x.data(), 2, 40)},
          {BufferRef::matrix(y.data(), 2, 40), BufferRef::matrix(runs.data(), 2, 1)});
    FAIL() << "expected an Error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    EXPECT_NE(std::string(e.what()).find("C/32"), std::string::npos) << e.what();
  }
}

TEST(GroupColumnsTest, BadOperandsAreVerifyErrors) {
  Expr x = ir::load(0, Param{"x"}, 0, Dim::C());
  EXPECT_EQ(test::verifyErrorOf([&] { ir::group(ReduceOp::Max, ir::constant(DType::F32, 1), 4); }),
            "group.max: operand is row-uniform; it takes a column vector");
  EXPECT_EQ(test::verifyErrorOf([&] { ir::repeat(ir::colIndex(0, Dim::C()), 4); }),
            "repeat: operand must be f32, not i32");
  EXPECT_EQ(test::verifyErrorOf([&] { ir::group(ReduceOp::Sum, x, 0); }),
            "group.sum: group of 0 columns (1 to 2^20)");
}

TEST(GroupColumnsTest, TextRoundTripsAndErrors) {
  std::string text = "program blocks {\n  in x: f32[R, C]\n  out y: f32[R, C]\n"
                     "  out s: f16[R, C/32]\n  %0 = load x[0:C]\n  %1 = group.max %0 by 32\n"
                     "  %2 = repeat %1 by 32\n  %3 = sub %0, %2\n  y[0:C] = %3\n"
                     "  s[0:C/32] = %1\n}\n";
  Program p = parse(text);
  EXPECT_EQ(print(p), text);
  EXPECT_EQ(parse(print(p)).hash(), p.hash());
  auto errorOf = [](const std::string &body) {
    try {
      parse("program e {\n  in x: f32[R, C]\n  out y: f32[R, C]\n  %0 = load x[0:C]\n" + body +
            "  y[0:C] = %1\n}\n");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(errorOf("  %1 = group.avg %0 by 4\n").find("unknown group reduction 'group.avg'"),
            std::string::npos);
  EXPECT_NE(errorOf("  %1 = repeat %0 4\n").find("'by' and the columns per group"),
            std::string::npos);
  EXPECT_NE(errorOf("  %1 = repeat %0 by C\n").find("must be a constant"), std::string::npos);
  EXPECT_NE(errorOf("  %1 = group %0 by 4\n").find("'group' needs a kind"), std::string::npos);
}

} // namespace
} // namespace lanejit
