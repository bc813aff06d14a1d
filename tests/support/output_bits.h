// tests/support/output_bits.h — a case's outputs as values, and a bitwise
// comparison of two such sets (NaN payloads and signed zeros included):
// what the "same bits under every switch, mapping and thread count" tests
// compare. Header-only: only those tests use it.
#pragma once

#include <lanejit/check.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace lanejit::test {

// Each output's bytes, row padding included, whatever its element type.
using Outputs = std::vector<std::vector<unsigned char>>;

inline Outputs outputsOf(const check::Case &c) {
  Outputs out;
  for (const check::GuardedBuffer &b : c.outputs) {
    auto *bytes = static_cast<const unsigned char *>(b.raw());
    out.emplace_back(bytes, bytes + b.bytes());
  }
  return out;
}

inline ::testing::AssertionResult sameBits(const Outputs &a, const Outputs &b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " outputs against " << b.size();
  for (size_t o = 0; o < a.size(); ++o) {
    if (a[o].size() != b[o].size())
      return ::testing::AssertionFailure() << "output " << o << " has another size";
    // memcmp on an empty output would get null pointers (UBSan).
    if (!a[o].empty() && std::memcmp(a[o].data(), b[o].data(), a[o].size()))
      return ::testing::AssertionFailure() << "output " << o << " differs bitwise";
  }
  return ::testing::AssertionSuccess();
}

} // namespace lanejit::test
