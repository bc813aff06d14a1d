// Storage-type conversions: integer arithmetic on the bit patterns (bf16,
// f16) and exact float steps (i8), so the result does not depend on the
// rounding mode or a flush-to-zero flag.
#include <lanejit/element_types.h>

#include <bit>
#include <cmath>
#include <cstring>

namespace lanejit {

uint16_t roundToBF16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return kCanonicalNaNBF16;
  // Round to nearest, ties to even: add just under half an ulp of bf16, plus
  // one when the kept part is odd. A carry into the exponent is the right
  // result, up to infinity.
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float widenBF16(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

uint16_t roundToF16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u)
    return kCanonicalNaNF16;
  if (a >= 0x477ff000u) // 65520 and up: the tie above 65504 rounds to even, infinity
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // 2^-14 and up: a normal f16
    a += 0x0fffu + ((a >> 13) & 1u);
    a -= 112u << 23; // exponent bias 127 -> 15
    return static_cast<uint16_t>(sign | (a >> 13));
  }
  // A subnormal f16 (or zero): the value in units of 2^-24, rounded to even.
  uint32_t exponent = a >> 23;
  if (exponent < 102) // below 2^-25: zero (2^-25 itself ties to even zero)
    return sign;
  uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent; // 14 .. 24
  uint32_t q = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
  q += rest > half || (rest == half && (q & 1u));
  return static_cast<uint16_t>(sign | q);
}

float widenF16(uint16_t bits) {
  uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // infinity, or a NaN made quiet with its payload
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13) |
                                (mantissa ? 0x400000u : 0u));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

int8_t roundToI8(float value) {
  if (std::isnan(value))
    return 0;
  // Clamping first keeps every value exact: 127 and -127 are integers, so
  // they round to themselves.
  float c = value > 127.0f ? 127.0f : value < -127.0f ? -127.0f : value;
  float whole = std::trunc(c), rest = c - whole; // both exact
  float away = whole + (c < 0 ? -1.0f : 1.0f);
  float magnitude = std::fabs(rest);
  bool odd = std::fmod(whole, 2.0f) != 0;
  return static_cast<int8_t>(magnitude > 0.5f || (magnitude == 0.5f && odd) ? away : whole);
}

float readElement(const void *data, DType type, int64_t index) {
  if (type == DType::I8)
    return static_cast<const int8_t *>(data)[index];
  if (type == DType::BF16 || type == DType::F16) {
    uint16_t bits;
    std::memcpy(&bits, static_cast<const char *>(data) + 2 * index, 2);
    return type == DType::BF16 ? widenBF16(bits) : widenF16(bits);
  }
  float value;
  std::memcpy(&value, static_cast<const char *>(data) + 4 * index, 4);
  return value;
}

void writeElement(void *data, DType type, int64_t index, float value) {
  if (type == DType::I8) {
    static_cast<int8_t *>(data)[index] = roundToI8(value);
    return;
  }
  if (type == DType::BF16 || type == DType::F16) {
    uint16_t bits = type == DType::BF16 ? roundToBF16(value) : roundToF16(value);
    std::memcpy(static_cast<char *>(data) + 2 * index, &bits, 2);
    return;
  }
  std::memcpy(static_cast<char *>(data) + 4 * index, &value, 4);
}

} // namespace lanejit
