// integer_absmax: a max reduction over absolute values steps by a signed
// integer max of the bits (codegen/emit_ops.cpp, emitReductionStepOf).
//
//  - The code: with the switch on, the row and group absmax of the int8
//    library entries step by llvm.smax, and none does with it off or for a
//    max over values that are not absolute values.
//  - The bits: rows and groups of 32 with NaNs of every kind, infinities,
//    zeros of both signs, denormals and ordinary values give the IEEE
//    maximum's bits, on and off, at every W, in the generic entry and in
//    the ones compiled for C.
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace lanejit {
namespace {

size_t smaxCalls(const Program &program, bool on) {
  CompileOptions o = test::targetOptions();
  o.integer_absmax = on;
  return test::countOccurrences(compile(program, o).dump("llvm-unoptimized"), "@llvm.smax.v");
}

TEST(IntegerAbsmax, AbsmaxStepsByIntegerMaxOnlyWhenOn) {
  for (const Program &p : {library::rmsNormQ8(), library::rmsNormQ8_0()}) {
    SCOPED_TRACE(p.name);
    EXPECT_GT(smaxCalls(p, true), 0u);
    EXPECT_EQ(smaxCalls(p, false), 0u);
  }
  // A max over values of either sign keeps the IEEE maximum.
  EXPECT_EQ(smaxCalls(library::maskedSoftmax(), true), 0u);
}

// Row r's absmax and its groups' of 32 (whole groups only: C is a multiple
// of 32), and a plain max beside them, which the switch must not touch.
Program absmaxProgram() {
  return parse(R"(program absmax {
  in x: f32[R, C]
  out m: f32[R, 1]
  out g: f32[R, C/32]
  out p: f32[R, 1]
  %0 = load x[0:C]
  %1 = abs %0
  %2 = reduce.max %1
  m[0:1] = %2
  %3 = group.max %1 by 32
  g[0:C/32] = %3
  %4 = reduce.max %0
  p[0:1] = %4
}
)");
}

// The stored bits of the IEEE maximum of `v` (NaN if any is NaN, -0 < +0,
// -inf for none), canonical NaN as every store writes it.
uint32_t maxBits(const std::vector<float> &v) {
  float m = -std::numeric_limits<float>::infinity();
  for (float x : v) {
    if (std::isnan(x))
      return test::kCanonicalNaN;
    if (x > m || (x == 0 && m == 0 && !std::signbit(x)))
      m = x;
  }
  return std::bit_cast<uint32_t>(m);
}

// Rows of special values: one kind per row, at a row-dependent column,
// among random values of both signs and magnitudes.
std::vector<float> specialRows(int64_t rows, int64_t cols) {
  const uint32_t specials[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u, 0x7fffffffu,
                               0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                               0x807fffffu, 0x7f7fffffu, 0xff7fffffu};
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    float *row = x.data() + r * cols;
    int kind = static_cast<int>(r % 16);
    for (int64_t c = 0; c < cols; ++c)
      row[c] = value(rng) * std::ldexp(1.0f, static_cast<int>(r % 7) * 9 - 27);
    if (kind < 13) // one special value somewhere in the row
      row[(r * 7) % cols] = test::floatBits(specials[kind]);
    else if (kind == 13) // all zeros, of both signs
      for (int64_t c = 0; c < cols; ++c)
        row[c] = c % 3 ? -0.0f : 0.0f;
    else if (kind == 14) // all -inf: abs gives +inf
      for (int64_t c = 0; c < cols; ++c)
        row[c] = -std::numeric_limits<float>::infinity();
    else // all denormal
      for (int64_t c = 0; c < cols; ++c)
        row[c] = test::floatBits(static_cast<uint32_t>(c * 977 + r) & 0x807fffffu);
  }
  return x;
}

TEST(IntegerAbsmax, TheIeeeMaximumsBitsOnAndOffAtEveryWidth) {
  Program program = absmaxProgram();
  const int64_t rows = 48;
  for (int64_t cols : {int64_t{32}, int64_t{96}, int64_t{352}}) {
    std::vector<float> x = specialRows(rows, cols);
    const int64_t groups = cols / 32;
    // The expected bits, from the definition.
    std::vector<uint32_t> wantM(rows), wantG(rows * groups), wantP(rows);
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = x.data() + r * cols;
      std::vector<float> abs, plain(row, row + cols);
      for (int64_t c = 0; c < cols; ++c)
        abs.push_back(std::fabs(row[c]));
      wantM[r] = maxBits(abs);
      wantP[r] = maxBits(plain);
      for (int64_t k = 0; k < groups; ++k)
        wantG[r * groups + k] =
            maxBits(std::vector<float>(abs.begin() + k * 32, abs.begin() + (k + 1) * 32));
    }
    for (int lanes : {4, 8, 16})
      for (bool on : {true, false})
        for (bool specialize : {true, false}) {
          SCOPED_TRACE(testing::Message() << "C=" << cols << " W=" << lanes << " integer_absmax "
                                          << on << " specialize_columns " << specialize);
          CompileOptions o = test::targetOptions();
          o.lanes = lanes;
          o.integer_absmax = on;
          o.specialize_columns = specialize;
          o.rows_across_lanes = false;
          Kernel kernel = compile(program, o);
          std::vector<float> m(rows), g(rows * groups), p(rows);
          // Three calls: run() compiles the entry for C on the third.
          for (int call = 0; call < 3; ++call)
            kernel.run({BufferRef::matrix(x.data(), rows, cols)},
                       {BufferRef::matrix(m.data(), rows, 1),
                        BufferRef::matrix(g.data(), rows, groups),
                        BufferRef::matrix(p.data(), rows, 1)});
          for (int64_t r = 0; r < rows; ++r) {
            ASSERT_EQ(std::bit_cast<uint32_t>(m[r]), wantM[r]) << "row " << r;
            ASSERT_EQ(std::bit_cast<uint32_t>(p[r]), wantP[r]) << "row " << r;
            for (int64_t k = 0; k < groups; ++k)
              ASSERT_EQ(std::bit_cast<uint32_t>(g[r * groups + k]), wantG[r * groups + k])
                  << "row " << r << " group " << k;
          }
        }
  }
}

} // namespace
} // namespace lanejit
