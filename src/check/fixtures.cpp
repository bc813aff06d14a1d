// The deterministic fixtures (docs/library.md, "Fixtures") and the byte
// hash used for input-unchanged and bitwise-identity checks.
#include <lanejit/check.h>

#include <cmath>

namespace lanejit::check {

float fixtureValue(std::string_view input_name, int64_t i) {
  // Each formula is evaluated in double and rounded once to f32, so every
  // implementation of the fixtures agrees bit for bit.
  double k = static_cast<double>(i);
  double value;
  if (input_name == "cos")
    value = std::cos(0.013 * k);
  else if (input_name == "sin")
    value = std::sin(0.013 * k);
  else if (input_name == "gamma")
    value = 1.0 + 0.2 * std::cos(0.113 * k);
  else if (input_name == "beta")
    value = 0.1 * std::sin(0.071 * k);
  else if (input_name == "u")
    value = 0.9 * std::cos(0.031 * k);
  else
    value = 1.7 * std::sin(0.173 * k);
  return static_cast<float>(value);
}

uint64_t hashBytes(const void *data, size_t bytes) {
  // FNV-1a, 64-bit.
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace lanejit::check
