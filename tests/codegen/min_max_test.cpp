// IEEE 754-2019 maximum and minimum (docs/architecture.md, IR semantics):
// a NaN operand gives NaN, and -0 < +0, for the elementwise max/min and for
// the max/min reductions. AVX-512DQ targets compute them with one vrangeps,
// others with compares and blends (codegen/emit_ops.cpp); every target and
// W, the generic entry and the entries compiled for C (whose short rows'
// max/min reductions keep one accumulator), must give the bits of a scalar
// reference, NaNs canonical at the store.
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace lanejit {
namespace {

using test::floatBits;
using test::kCanonicalNaN;

const char *kProgram = R"(
program min_max {
  in x: f32[R, C]
  in u: f32[R, C]
  out hi: f32[R, C]
  out lo: f32[R, C]
  out rows_hi: f32[R, C]
  out rows_lo: f32[R, C]
  %x = load x[0:C]
  %u = load u[0:C]
  %a = max %x, %u
  %b = min %x, %u
  hi[0:C] = %a
  lo[0:C] = %b
  %m = reduce.max %x
  %n = reduce.min %u
  %z = const f32 -0
  %mz = add %m, %z
  %nz = add %n, %z
  rows_hi[0:C] = %mz
  rows_lo[0:C] = %nz
}
)";

// The reference: exactly the IEEE operation, NaN written canonical.
float ieee(bool isMax, float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return floatBits(kCanonicalNaN);
  if (a == 0.0f && b == 0.0f) { // -0 < +0
    bool negative = isMax ? std::signbit(a) && std::signbit(b) : std::signbit(a) || std::signbit(b);
    return negative ? -0.0f : 0.0f;
  }
  return (a > b) == isMax ? a : b;
}

// Rows cycle through special values so that zeros of both signs meet each
// other, infinities and NaNs (payloads, signs, signalling) in every lane
// position; every fourth row has no NaN, so its reductions are numbers.
float inputValue(int input, int64_t r, int64_t c) {
  static const float kInf = std::numeric_limits<float>::infinity();
  static const float kSpecial[] = {-0.0f,
                                   0.0f,
                                   -0.0f,
                                   kInf,
                                   -kInf,
                                   1.0f,
                                   -1.0f,
                                   std::numeric_limits<float>::denorm_min(),
                                   -std::numeric_limits<float>::denorm_min(),
                                   std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(),
                                   floatBits(0x7fc12345u),
                                   floatBits(0xffd00042u),
                                   floatBits(0x7f800001u),
                                   0.0f,
                                   -0.0f,
                                   2.5f};
  constexpr int64_t n = std::size(kSpecial);
  float v = kSpecial[(c * (2 * input + 1) + r * 3 + input) % n];
  if (r % 4 == 3 && std::isnan(v))
    return (c + input) % 2 ? 0.0f : -0.0f;
  if (r % 8 == 7) // zeros only: the sign decides
    return (c * 5 + r + input) % 3 ? -0.0f : 0.0f;
  return v;
}

uint32_t want(const check::Case &c, size_t output, int64_t r, int64_t col) {
  auto x = [&](int64_t j) { return c.inputs[0].at(r, j); };
  auto u = [&](int64_t j) { return c.inputs[1].at(r, j); };
  float v = 0.0f;
  switch (output) {
  case 0: v = ieee(true, x(col), u(col)); break;
  case 1: v = ieee(false, x(col), u(col)); break;
  case 2:
    v = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < c.shape.cols; ++j)
      v = ieee(true, v, x(j));
    break;
  default:
    v = std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < c.shape.cols; ++j)
      v = ieee(false, v, u(j));
  }
  return std::bit_cast<uint32_t>(v);
}

struct Target {
  const char *name;
  std::string features; // over test::targetOptions()'s
};

TEST(MinMax, EveryTargetAndWidthGivesTheIeeeBits) {
  Program program = parse(kProgram);
  int checked = 0;
  for (const Target &target : {Target{"host", ""}, Target{"without AVX-512DQ", "-avx512dq"}})
    for (int lanes : {4, 8, 16})
      for (int64_t cols : {1, 3, 8, 15, 16, 17, 33, 64, 65, 128, 129, 130}) {
        CompileOptions o = test::targetOptions();
        o.lanes = lanes;
        if (!target.features.empty())
          o.target_features += (o.target_features.empty() ? "" : ",") + target.features;
        Kernel kernel = compile(program, o);
        check::Case c = check::makeCase(program, {24, cols}, check::Fill::Random, 1);
        for (size_t i = 0; i < c.inputs.size(); ++i)
          for (int64_t r = 0; r < c.shape.rows; ++r)
            for (int64_t col = 0; col < cols; ++col)
              c.inputs[i].at(r, col) = inputValue(static_cast<int>(i), r, col);
        int failures = 0;
        // run() takes the generic entry on a first call; bind() the entry
        // compiled for this C.
        for (const char *entry : {"generic", "compiled for C"}) {
          if (entry[0] == 'g')
            kernel.run(c.inputRefs(), c.outputRefs());
          else
            kernel.bind(c.inputRefs(), c.outputRefs())();
          for (size_t o = 0; o < c.outputs.size(); ++o)
            for (int64_t r = 0; r < c.shape.rows; ++r)
              for (int64_t col = 0; col < cols; ++col) {
                uint32_t got = std::bit_cast<uint32_t>(c.outputs[o].at(r, col));
                uint32_t expected = want(c, o, r, col);
                ++checked;
                if (got != expected && ++failures <= 5)
                  ADD_FAILURE() << target.name << ", W = " << lanes << ", C = " << cols << ", "
                                << entry << " entry: " << program.outputs[o].name << "[" << r
                                << ", " << col << "] is 0x" << std::hex << got << ", IEEE gives 0x"
                                << expected;
              }
        }
      }
  EXPECT_GT(checked, 100000);
}

// The instruction choice, read from assembly compiled for pinned targets
// (no run: any host can check it).
TEST(MinMax, Avx512DqUsesVrangeAndOthersDoNot) {
  Program program = parse(kProgram);
  CompileOptions v4;
  v4.target_cpu = "x86-64-v4";
  v4.lanes = 16;
  std::string asm16 = compile(program, v4).dump("asm");
  EXPECT_GE(test::countOccurrences(asm16, "vrangeps"), 4u) << asm16;
  CompileOptions noDq = v4;
  noDq.target_features = "-avx512dq";
  EXPECT_EQ(test::countOccurrences(compile(program, noDq).dump("asm"), "vrangeps"), 0u);
  CompileOptions v3;
  v3.target_cpu = "x86-64-v3";
  v3.lanes = 8;
  EXPECT_EQ(test::countOccurrences(compile(program, v3).dump("asm"), "vrangeps"), 0u);
}

// Before: the max/min reductions of an entry compiled for C = 65 (rows of 5
// packets at W = 16). single_max_accumulator: each keeps one accumulator,
// so there are no K-way combine trees. Expected: fewer vrangeps than with
// the switch off (K = 4: three combine steps each), and for C = 1000 (past
// the short-row limit) the same code either way.
TEST(MinMax, ShortRowsKeepOneAccumulator) {
  Program program = parse(kProgram);
  CompileOptions on;
  on.target_cpu = "x86-64-v4";
  on.lanes = 16;
  CompileOptions off = on;
  off.single_max_accumulator = false;
  auto vranges = [&](const CompileOptions &o, int64_t cols) {
    return test::countOccurrences(compile(program, o).dump("asm", cols), "vrangeps");
  };
  EXPECT_LT(vranges(on, 65), vranges(off, 65));
  // (The function names differ: each compile numbers its module.)
  std::string longOn = compile(program, on).dump("asm", 1000);
  std::string longOff = compile(program, off).dump("asm", 1000);
  EXPECT_EQ(test::countOccurrences(longOn, "vrangeps"),
            test::countOccurrences(longOff, "vrangeps"));
  EXPECT_EQ(test::countOccurrences(longOn, "\n"), test::countOccurrences(longOff, "\n"));
}

} // namespace
} // namespace lanejit
