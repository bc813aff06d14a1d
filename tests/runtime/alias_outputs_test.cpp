// Aliasing with two outputs (no library program has two, so a small DSL
// program): outputs that overlap, exactly or partly, are rejected with
// Error(Kind::Bind) naming both before anything is written; disjoint
// outputs, even adjacent, work; an input in place on either output, or
// straddling both, gives the oracle's answer on un-aliased copies.
#include "support/aliased_call.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>

namespace lanejit {
namespace {

// first = 2x (pointwise), second = x - mean(x) (needs a whole row first).
Program twoOutputs() {
  ProgramBuilder b("two_outputs");
  Expr x = b.rows("x");
  b.output("first", x * 2.0f);
  b.output("second", x - mean(x));
  return b.build();
}

const Shape kShapes[] = {{5, 37}, {4, 64}, {3, 1}};

// first far from x, second at first + k: moving second by up to the whole
// of first overlaps nothing but first.
test::Layout withSecondAt(Shape shape, int64_t k) {
  test::Layout l = test::separateLayout(twoOutputs(), shape);
  l.outputs[0].at = l.inputs[0].at + 4 * (l.inputs[0].extent() + 64);
  l.outputs[1].at = l.outputs[0].at + k;
  return l;
}

// The message of the Error(Kind::Bind) the aliased call throws, or "" if it
// runs. A rejected call must not have written anything.
std::string bindErrorOf(const Kernel &k, const test::Layout &l) {
  int64_t lo = 0, hi = 0;
  for (const auto *list : {&l.inputs, &l.outputs})
    for (const test::Placed &p : *list)
      lo = std::min(lo, p.at), hi = std::max(hi, p.at + p.extent());
  const int64_t shift = 64 - lo;
  std::vector<float> arena(static_cast<size_t>(hi - lo + 128), 0.5f);
  const std::vector<float> before = arena;
  std::vector<BufferRef> ins{test::refInto(arena, l.inputs[0], shift)};
  std::vector<BufferRef> outs{test::refInto(arena, l.outputs[0], shift),
                              test::refInto(arena, l.outputs[1], shift)};
  try {
    k.run(ins, outs);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind) << e.what();
    EXPECT_TRUE(arena == before) << test::describe(l) << ": memory written before the error";
    return e.what();
  }
  return "";
}

TEST(AliasOutputs, OverlappingOutputsAreRejectedNamingBoth) {
  test::forEachAliasKernel(twoOutputs(), [](const Kernel &k, int64_t w) {
    for (Shape shape : kShapes) {
      const int64_t c = shape.cols, last = (shape.rows - 1) * c + c - 1;
      // Exact, shifted by part of a packet, a packet, half a row, a row, and
      // sharing only the last (or first) element; either output first.
      for (int64_t k2 : {int64_t(0), int64_t(1), w - 1, w, c / 2, c, last}) {
        if (k2 > last)
          continue; // past the end of a small output: no overlap to reject
        for (int64_t sign : {1, -1}) {
          test::Layout l = withSecondAt(shape, sign * k2);
          ASSERT_TRUE(l.outputs[0].overlaps(l.outputs[1])) << test::describe(l);
          std::string msg = bindErrorOf(k, l);
          EXPECT_NE(msg, "") << test::describe(l) << ": overlapping outputs accepted";
          EXPECT_NE(msg.find("'first'"), std::string::npos) << test::describe(l) << ": " << msg;
          EXPECT_NE(msg.find("'second'"), std::string::npos) << test::describe(l) << ": " << msg;
          EXPECT_NE(msg.find("overlap"), std::string::npos) << test::describe(l) << ": " << msg;
        }
      }
    }
  });
}

TEST(AliasOutputs, OverlapThroughPaddedRowsIsRejected) {
  // first's rows are padded; second starts inside first's padding and runs
  // into first's next row.
  Kernel k = compile(twoOutputs());
  test::Layout l = test::separateLayout(twoOutputs(), {4, 16}, 8);
  l.outputs[1].at = l.outputs[0].at + 16 + 2; // in row 0's padding, ends in row 1
  std::string msg = bindErrorOf(k, l);
  EXPECT_NE(msg, "") << test::describe(l) << ": overlapping outputs accepted";
  EXPECT_NE(msg.find("'first'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'second'"), std::string::npos) << msg;
}

TEST(AliasOutputs, DisjointOutputsWork) {
  test::FailureLimit limit;
  test::forEachAliasKernel(twoOutputs(), [&](const Kernel &k, int64_t w) {
    for (Shape shape : kShapes) {
      const int64_t size = shape.rows * shape.cols;
      // Far apart, adjacent either way, and one float apart.
      for (int64_t k2 : {2 * size + 64, size, -size, size + 1}) {
        test::Layout l = withSecondAt(shape, k2);
        ASSERT_FALSE(l.outputs[0].overlaps(l.outputs[1])) << test::describe(l);
        EXPECT_TRUE(limit(test::runAliased(k, l, 600)));
      }
    }
  });
}

TEST(AliasOutputs, InputInPlaceOnEitherOutputOrAcrossBoth) {
  test::FailureLimit limit;
  test::forEachAliasKernel(twoOutputs(), [&](const Kernel &k, int64_t w) {
    for (Shape shape : kShapes) {
      const int64_t c = shape.cols, size = shape.rows * c;
      for (int out = 0; out < 2; ++out)
        for (int64_t shift : {int64_t(0), int64_t(1), int64_t(-1), w, -w, c, -c}) {
          test::Layout l = test::separateLayout(twoOutputs(), shape);
          l.outputs[out].at = l.inputs[0].at + shift;
          EXPECT_TRUE(limit(test::runAliased(k, l, 700 + shift)));
        }
      // first and second adjacent, x straddling the boundary between them.
      for (int64_t shift : {int64_t(1), c / 2, c, size / 2, size - 1}) {
        test::Layout l = withSecondAt(shape, size);
        l.inputs[0].at = l.outputs[0].at + shift;
        EXPECT_TRUE(limit(test::runAliased(k, l, 800 + shift)));
      }
    }
  });
}

} // namespace
} // namespace lanejit
