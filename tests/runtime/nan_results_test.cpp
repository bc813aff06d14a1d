// NaN results are canonical: every NaN a kernel writes is the quiet NaN
// 0xffc00000 (x86's "indefinite" NaN), under every switch combination,
// inlining policy and opt level (docs/switches.md, "NaN results"). x86 gives
// a NaN the sign and payload of whichever NaN operand it saw first, or the
// indefinite NaN for an invalid operation, so without the rule the bits
// depended on register allocation: rsqrt of a negative fed to fma gave
// 0xffc00000 by default and 0x7fc00000 with helper bodies or at opt level 0.
//
// One program makes NaNs from several sources (rsqrt, sqrt and log of
// negatives, inf - inf, 0 * inf, NaN inputs with payloads and both signs,
// a row sum of NaNs) and meets them in fma, add, mul and div; its outputs
// include a plain copy of an input and a column-bounded select whose fill
// is a NaN row sum. Every configuration must give the baseline's bits, every
// NaN must be 0xffc00000, and everything else must match the FP64 oracle.
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <tuple>

namespace lanejit {
namespace {

using Inline = CompileOptions::Inline;

using test::floatBits;
using test::kCanonicalNaN;

const char *kProgram = R"(
program nan_sources {
  in x: f32[R, C]
  in z: f32[R, C]
  out y: f32[R, C]
  out v: f32[R, C]
  out u: f32[R, C]
  out n: f32[R, C]
  %x = load x[0:C]
  %z = load z[0:C]
  %inf = const f32 inf
  %a = rsqrt %x
  %b = sqrt %x
  %c = log %x
  %p = mul %z, %inf
  %d = sub %p, %inf
  %e = fma %a, %d, %c
  %f = add %b, %e
  %g = mul %f, %c
  %h = div %g, %a
  y[0:C] = %h
  %s = reduce.sum %a
  %m = mul %a, %z
  %o = add %m, %b
  %t = fma %s, %c, %o
  v[0:C] = %t
  %col = col[0:C]
  %row = row
  %k = le %col, %row
  %q = select %k, %e, %s
  u[0:C] = %q
  n[0:C] = %z
}
)";

// Row 1 is finite and positive in x, so its row sum is a number; rows 0
// and 2 cycle through special values (two rotations).
float inputValue(int input, int64_t r, int64_t c) {
  // 0x7f800001 is a signalling NaN; 0x7fc12345 and 0xffd00042 carry payloads.
  static const float kInf = std::numeric_limits<float>::infinity();
  static const float kSpecial[] = {-1.0f,
                                   -0.0f,
                                   0.0f,
                                   2.0f,
                                   kInf,
                                   -kInf,
                                   floatBits(0x7fc00000u),
                                   floatBits(0xffc00000u),
                                   floatBits(0x7f800001u),
                                   floatBits(0x7fc12345u),
                                   floatBits(0xffd00042u),
                                   -2.5f,
                                   0.5f,
                                   1e-3f,
                                   3.0f,
                                   -0.25f,
                                   7.0f};
  constexpr int64_t n = std::size(kSpecial);
  if (r % 3 == 1)
    return input == 0 ? 0.5f + 0.03f * float(c % 50) : -2.0f + 0.07f * float(c % 57);
  return kSpecial[(c * (input + 1) + r + 3 * input) % n];
}

struct Config {
  CompileOptions options;
  std::string name;
};

// Every combination of the seven boolean switches and three inlining
// policies at one W and opt level; the first has every default.
std::vector<Config> configurations(int lanes, int opt) {
  bool CompileOptions::*switches[] = {&CompileOptions::fuse_pointwise,
                                      &CompileOptions::fuse_reductions,
                                      &CompileOptions::fuse_outputs,
                                      &CompileOptions::bound_masked_columns,
                                      &CompileOptions::specialize_full_packets,
                                      &CompileOptions::prove_in_place,
                                      &CompileOptions::hoist_guards};
  constexpr int kCount = static_cast<int>(std::size(switches));
  std::vector<Config> configs;
  for (Inline policy : {Inline::CostRule, Inline::Always, Inline::Never})
    for (unsigned off = 0; off < (1u << kCount); ++off) {
      CompileOptions o;
      o.lanes = lanes;
      o.opt_level = opt;
      o.inline_packet_bodies = policy;
      for (int i = 0; i < kCount; ++i)
        o.*switches[i] = !(off & (1u << i));
      std::ostringstream name;
      name << "W=" << lanes << " O" << opt << " inline=" << int(policy) << " off-mask=" << off;
      configs.push_back({o, name.str()});
    }
  return configs;
}

check::Case makeNanCase(const Program &program) {
  check::Case c = check::makeCase(program, {3, 2 * 16 + 5}, check::Fill::Random, 1);
  for (size_t i = 0; i < c.inputs.size(); ++i)
    for (int64_t r = 0; r < c.shape.rows; ++r)
      for (int64_t col = 0; col < c.shape.cols; ++col)
        c.inputs[i].at(r, col) = inputValue(static_cast<int>(i), r, col);
  return c;
}

// Runs `kernel` on fresh outputs; returns every output's bits.
std::vector<std::vector<uint32_t>> run(const Kernel &kernel, check::Case &c,
                                       ::testing::AssertionResult *oracle) {
  for (check::GuardedBuffer &out : c.outputs)
    out.fill(0.0f);
  *oracle = test::runMatchesReference(kernel, c);
  std::vector<std::vector<uint32_t>> got;
  for (const check::GuardedBuffer &out : c.outputs) {
    got.emplace_back();
    for (int64_t r = 0; r < out.rows(); ++r)
      for (int64_t col = 0; col < out.cols(); ++col)
        got.back().push_back(std::bit_cast<uint32_t>(out.at(r, col)));
  }
  return got;
}

class NanResults : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(NanResults, AreCanonicalAndIdenticalUnderEverySwitch) {
  auto [lanes, opt] = GetParam();
  Program program = parse(kProgram);
  check::Case c = makeNanCase(program);
  ::testing::AssertionResult oracle = ::testing::AssertionSuccess();
  CompileOptions base;
  base.lanes = 4;
  std::vector<std::vector<uint32_t>> want = run(compile(program, base), c, &oracle);
  ASSERT_TRUE(oracle);
  // The program must make NaNs of more than one kind for the test to mean
  // anything: count them, and check each is canonical.
  int nans = 0;
  for (size_t o = 0; o < want.size(); ++o)
    for (uint32_t w : want[o])
      if (std::isnan(std::bit_cast<float>(w))) {
        ++nans;
        EXPECT_EQ(w, kCanonicalNaN)
            << "output '" << program.outputs[o].name << "' holds a NaN " << std::hex << w;
      }
  EXPECT_GT(nans, 40);

  int failures = 0;
  for (const Config &config : configurations(lanes, opt)) {
    std::vector<std::vector<uint32_t>> got = run(compile(program, config.options), c, &oracle);
    EXPECT_TRUE(oracle) << config.name;
    for (size_t o = 0; o < got.size(); ++o)
      for (size_t i = 0; i < got[o].size(); ++i)
        if (got[o][i] != want[o][i] && ++failures <= 10)
          ADD_FAILURE() << config.name << ": output '" << program.outputs[o].name << "' element "
                        << i << " is 0x" << std::hex << got[o][i] << ", baseline 0x" << want[o][i];
  }
  EXPECT_EQ(failures, 0) << "elements differing from the baseline (first 10 shown)";
}

INSTANTIATE_TEST_SUITE_P(WidthsAndOptLevels, NanResults,
                         // Both opt levels and both extreme widths, in two
                         // tests (each compiles 384 configurations).
                         ::testing::Values(std::make_tuple(4, 0), std::make_tuple(16, 2)),
                         [](const auto &info) {
                           return "W" + std::to_string(std::get<0>(info.param)) + "_O" +
                                  std::to_string(std::get<1>(info.param));
                         });

} // namespace
} // namespace lanejit
