// Hash mixing shared by the IR's structural hashes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace lanejit::detail {

inline uint64_t hashMix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

inline uint64_t hashDouble(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

inline uint64_t hashString(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

} // namespace lanejit::detail
