// The bf16 and f16 conversions (lanejit/element_types.h), checked against
// definitions computed another way: the nearest of the two neighbouring
// values in double, ties to the even one (bf16), and GCC's _Float16 (f16).
// Every 16-bit pattern widens; a stride through every f32 pattern, every
// halfway case between two neighbours and the special values round. i8
// against nearbyint, clamped.
#include <lanejit/element_types.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lanejit {
namespace {

float bitsFloat(uint32_t u) { return std::bit_cast<float>(u); }

// The bf16 nearest to x by distance in double, ties to the even pattern
// (x finite).
uint16_t nearestBF16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  auto down = static_cast<uint16_t>(u >> 16), up = static_cast<uint16_t>(down + 1);
  double dd = std::abs(double(x) - double(widenBF16(down)));
  // Infinity counts as 2^128 here, the next value of an unbounded exponent.
  double upValue = (up & 0x7fffu) == 0x7f80u ? std::copysign(0x1p128, x) : double(widenBF16(up));
  double du = std::abs(double(x) - upValue);
  if ((u & 0xffffu) == 0)
    return down;
  if (dd != du)
    return dd < du ? down : up;
  return (down & 1) ? up : down;
}

TEST(ElementTypes, WidenBF16IsTheTopHalfOfAnF32) {
  for (uint32_t h = 0; h < 0x10000; ++h)
    ASSERT_EQ(std::bit_cast<uint32_t>(widenBF16(static_cast<uint16_t>(h))), h << 16);
}

TEST(ElementTypes, WidenF16MatchesTheCompilersConversion) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    auto bits = static_cast<uint16_t>(h);
    auto want = static_cast<float>(std::bit_cast<_Float16>(bits));
    float got = widenF16(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      // Quiet, sign and payload kept.
      ASSERT_EQ(std::bit_cast<uint32_t>(got),
                (uint32_t{h & 0x8000u} << 16) | 0x7fc00000u | (uint32_t{h & 0x3ffu} << 13))
          << std::hex << h;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << std::hex << h;
    }
  }
}

// Every rounding of an f32 pattern `u` agrees with the other definition.
void expectRounds(uint32_t u) {
  float x = bitsFloat(u);
  if (std::isnan(x)) {
    ASSERT_EQ(roundToBF16(x), kCanonicalNaNBF16) << std::hex << u;
    ASSERT_EQ(roundToF16(x), kCanonicalNaNF16) << std::hex << u;
    return;
  }
  ASSERT_EQ(roundToBF16(x), nearestBF16(x)) << std::hex << u;
  ASSERT_EQ(roundToF16(x), std::bit_cast<uint16_t>(static_cast<_Float16>(x))) << std::hex << u;
}

TEST(ElementTypes, RoundingAgreesOnAStrideThroughEveryF32Pattern) {
  // 0x10001 is odd, so the stride visits every low half as well.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099)
    expectRounds(static_cast<uint32_t>(u));
}

TEST(ElementTypes, EveryHalfwayCaseRoundsToEven) {
  // bf16: between every pair of neighbours, and one f32 step either side.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint32_t tie = (h << 16) | 0x8000u;
    for (uint32_t u : {tie - 1, tie, tie + 1})
      expectRounds(u);
    uint16_t want = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    if (!std::isnan(bitsFloat(tie)) && !std::isnan(widenBF16(static_cast<uint16_t>(h)))) {
      ASSERT_EQ(roundToBF16(bitsFloat(tie)), want) << std::hex << h;
    }
  }
  // f16: midpoints between every two neighbouring finite values (exact in f32).
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float lo = widenF16(static_cast<uint16_t>(h)), hi = widenF16(static_cast<uint16_t>(h + 1));
    float mid = static_cast<float>((double(lo) + double(hi)) / 2);
    ASSERT_EQ(double(mid), (double(lo) + double(hi)) / 2) << std::hex << h;
    for (float m : {mid, -mid}) {
      uint32_t u = std::bit_cast<uint32_t>(m);
      for (uint32_t v : {u - 1, u, u + 1})
        expectRounds(v);
    }
    uint16_t want = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(roundToF16(mid), want) << std::hex << h;
  }
}

TEST(ElementTypes, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(roundToBF16(inf), 0x7f80);
  EXPECT_EQ(roundToBF16(-inf), 0xff80);
  EXPECT_EQ(roundToBF16(0.0f), 0x0000);
  EXPECT_EQ(roundToBF16(-0.0f), 0x8000);
  EXPECT_EQ(roundToBF16(std::numeric_limits<float>::max()), 0x7f80); // rounds up to infinity
  EXPECT_EQ(roundToBF16(bitsFloat(0x00000001)), 0x0000);            // below half a bf16 step
  EXPECT_EQ(roundToBF16(bitsFloat(0x00018000)), 0x0002);            // a denormal tie, to even
  EXPECT_EQ(roundToBF16(bitsFloat(0x7fa00000)), kCanonicalNaNBF16); // signalling NaN
  EXPECT_EQ(roundToBF16(bitsFloat(0xffc00000)), kCanonicalNaNBF16);
  EXPECT_EQ(roundToF16(inf), 0x7c00);
  EXPECT_EQ(roundToF16(-inf), 0xfc00);
  EXPECT_EQ(roundToF16(-0.0f), 0x8000);
  EXPECT_EQ(roundToF16(65504.0f), 0x7bff);
  EXPECT_EQ(roundToF16(65519.99f), 0x7bff);
  EXPECT_EQ(roundToF16(65520.0f), 0x7c00); // the tie above the largest value: to even, infinity
  EXPECT_EQ(roundToF16(0x1p-24f), 0x0001); // the smallest subnormal
  EXPECT_EQ(roundToF16(0x1p-25f), 0x0000); // half of it: a tie, to even zero
  EXPECT_EQ(roundToF16(0x1.8p-24f), 0x0002);
  EXPECT_EQ(roundToF16(0x1p-14f), 0x0400); // the smallest normal
  EXPECT_EQ(roundToF16(bitsFloat(0x7f800001)), kCanonicalNaNF16);
  EXPECT_TRUE(std::isnan(widenBF16(kCanonicalNaNBF16)));
  EXPECT_TRUE(std::isnan(widenF16(kCanonicalNaNF16)));
  EXPECT_EQ(std::bit_cast<uint32_t>(widenBF16(kCanonicalNaNBF16)), 0xffc00000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(widenF16(kCanonicalNaNF16)), 0xffc00000u);
}

TEST(ElementTypes, ReadAndWriteElementsOfEachType) {
  uint16_t halves[3] = {};
  writeElement(halves, DType::BF16, 1, 1.5f);
  EXPECT_EQ(halves[1], 0x3fc0);
  EXPECT_EQ(readElement(halves, DType::BF16, 1), 1.5f);
  writeElement(halves, DType::F16, 2, -2.0f);
  EXPECT_EQ(halves[2], 0xc000);
  EXPECT_EQ(readElement(halves, DType::F16, 2), -2.0f);
  float floats[2] = {};
  writeElement(floats, DType::F32, 1, 0.1f);
  EXPECT_EQ(readElement(floats, DType::F32, 1), 0.1f);
  EXPECT_EQ(bytesOf(DType::BF16), 2);
  EXPECT_EQ(bytesOf(DType::F16), 2);
  EXPECT_EQ(bytesOf(DType::F32), 4);
  int8_t bytes[2] = {};
  writeElement(bytes, DType::I8, 1, -3.5f);
  EXPECT_EQ(bytes[1], -4);
  EXPECT_EQ(readElement(bytes, DType::I8, 1), -4.0f);
  EXPECT_EQ(bytesOf(DType::I8), 1);
}

// roundToI8 against the C library's nearbyint in the default rounding mode
// (nearest-even), clamped, on a stride through every f32 pattern and every
// halfway case in range.
TEST(ElementTypes, RoundToI8IsNearestEvenSaturated) {
  auto reference = [](float x) -> int {
    if (std::isnan(x))
      return 0;
    double r = std::nearbyint(double(x));
    return static_cast<int>(std::clamp(r, -127.0, 127.0));
  };
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) {
    float x = bitsFloat(static_cast<uint32_t>(u));
    ASSERT_EQ(roundToI8(x), reference(x)) << std::hex << u;
  }
  for (int k = -200; k <= 200; ++k) {
    float half = static_cast<float>(k) + 0.5f;
    for (float x : {std::nextafter(half, -1e9f), half, std::nextafter(half, 1e9f)})
      ASSERT_EQ(roundToI8(x), reference(x)) << x;
  }
}

} // namespace
} // namespace lanejit
