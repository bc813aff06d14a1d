// fma(x, y, z) is x * y + z rounded once on every target
// (codegen/emit_ops.cpp): with FMA hardware one instruction; without, exact
// in double with the sum rounded to odd, never an fmaf call per lane (a
// kernel may not import it). Before -> compile for the target -> Expected:
// the bits of the C library's correctly rounded fmaf.
#include <lanejit/dsl.h>
#include <lanejit/kernel.h>

#include "support/output_bits.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace lanejit {
namespace {

Program fmaProgram() {
  ProgramBuilder b("fused");
  // One statement each: the inputs' order is their declaration order.
  Expr x = b.rows("a"), y = b.rows("b"), z = b.rows("c");
  b.output("out", fma(x, y, z));
  return b.build();
}

// Triples where rounding the double sum to nearest, then to float, would
// round twice: x * y = 1 + 2^-11 + 2^-24 sits exactly halfway between two
// floats, and z moves it a tiny way off (to nearest in double would land
// back on the halfway point). Then specials, signed zeros, overflow,
// denormals, cancellation, and random triples over the whole range.
std::vector<std::array<float, 3>> triples() {
  const float half = 1.0f + 0x1p-12f, inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::array<float, 3>> t = {{half, half, 0x1p-60f},
                                         {half, half, -0x1p-60f},
                                         {-half, half, 0x1p-60f},
                                         {half, -half, -0x1p-60f},
                                         {1.0f + 0x1p-23f, 1.0f + 0x1p-23f, 0x1p-70f},
                                         {0.0f, 5.0f, -0.0f},
                                         {-0.0f, 5.0f, -0.0f},
                                         {0x1p100f, 0x1p100f, 1.0f},
                                         {0x1p100f, 0x1p100f, -inf},
                                         {inf, 0.0f, 1.0f},
                                         {nan, 1.0f, 1.0f},
                                         {1.0f, 1.0f, inf},
                                         {0x1p-100f, 0x1p-49f, 0x1p-149f},
                                         {0x1p-75f, 0x1p-75f, -0x1p-149f},
                                         {3.0f, 1.0f / 3.0f, -1.0f},
                                         {0.1f, 10.0f, -1.0f},
                                         {FLT_MAX, 2.0f, -FLT_MAX}};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 20000; ++i) {
    // Exponents near each other half the time, so the sum cancels.
    float x = test::floatBits(bits(rng)), y = test::floatBits(bits(rng) & 0xbfffffffu);
    float z = i % 2 ? -x * y * (1.0f + test::floatBits(bits(rng) & 0x33ffffffu))
                    : test::floatBits(bits(rng));
    t.push_back({x, y, z});
  }
  return t;
}

TEST(Fma, RoundsOnceWithAndWithoutFmaHardware) {
  std::vector<std::array<float, 3>> t = triples();
  const int64_t n = static_cast<int64_t>(t.size());
  std::vector<float> x(n), y(n), z(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = t[i][0], y[i] = t[i][1], z[i] = t[i][2];
    want[i] = std::fmaf(x[i], y[i], z[i]);
  }
  for (const char *features : {"", "-fma", "-fma,-avx512f", "-fma,-avx512f,-avx"}) {
    SCOPED_TRACE(features);
    CompileOptions o = test::targetOptions();
    if (*features)
      o.target_features += (o.target_features.empty() ? "" : ",") + std::string(features);
    Kernel k = compile(fmaProgram(), o);
    EXPECT_TRUE(k.object().find("fmaf") == std::string::npos) << "imports fmaf";
    for (int64_t cols : {n, int64_t{7}}) { // one long row; rows with tails
      std::vector<float> got(n);
      k.run({BufferRef::matrix(x.data(), n / cols, cols),
             BufferRef::matrix(y.data(), n / cols, cols),
             BufferRef::matrix(z.data(), n / cols, cols)},
            {BufferRef::matrix(got.data(), n / cols, cols)});
      for (int64_t i = 0; i < n / cols * cols; ++i) {
        bool same = std::isnan(want[i]) ? std::isnan(got[i])
                                        : std::memcmp(&got[i], &want[i], sizeof(float)) == 0;
        ASSERT_TRUE(same) << std::hexfloat << "fma(" << x[i] << ", " << y[i] << ", " << z[i]
                          << ") = " << got[i] << ", want " << want[i];
      }
    }
  }
}

} // namespace
} // namespace lanejit
