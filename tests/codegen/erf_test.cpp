// The erf op through the whole compiler: y = erf(x) and exact GELU
// (0.5·x·(1 + erf(x/√2)) + u) compiled at every W, with and without
// full-packet specialization, against the FP64 oracle on column counts whose
// tails cover 0 .. 2W+1 lanes, plus in place (y aliasing x).
#include "support/testing.h"

#include <lanejit/dsl.h>
#include <lanejit/kernel.h>
#include <lanejit/text.h>

namespace lanejit {
namespace {

Program erfProgram() {
  return parse(R"(
program erf {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = erf %0
  y[0:C] = %1
})");
}

// GELU without the tanh approximation, as torch.nn.functional.gelu computes
// it, plus a residual.
Program geluErfProgram() {
  ProgramBuilder b("gelu_erf");
  Expr x = b.rows("x");
  Expr u = b.rows("u");
  Expr g = 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));
  b.output("y", g + u);
  return b.build();
}

TEST(ErfKernel, TextRoundTrips) {
  Program p = erfProgram();
  EXPECT_NE(print(p).find("%1 = erf %0"), std::string::npos) << print(p);
  EXPECT_EQ(parse(print(p)).hash(), p.hash());
}

TEST(ErfKernel, EveryTailEveryWidthMatchesOracle) {
  for (const Program &p : {erfProgram(), geluErfProgram()})
    for (int lanes : {4, 8, 16})
      for (bool spec : {true, false}) {
        CompileOptions o = test::targetOptions();
        o.lanes = lanes;
        o.specialize_full_packets = spec;
        for (Shape s : test::sweepShapes(lanes)) {
          SCOPED_TRACE(testing::Message() << p.name << " W=" << lanes << " spec=" << spec << " "
                                          << s.rows << "x" << s.cols);
          EXPECT_TRUE(test::compileAndCheck(p, s, o, check::Fill::Random, 3));
        }
      }
}

TEST(ErfKernel, SeedFixtureShapes) {
  for (Shape s : {Shape{17, 65}, Shape{1024, 4097}})
    EXPECT_TRUE(
        test::compileAndCheck(geluErfProgram(), s, test::targetOptions(), check::Fill::Fixture, 0));
}

} // namespace
} // namespace lanejit
