// SHA-256 through LLVM's implementation (io/sha256.h). LLVM is linked
// anyway, and its digest needs no start-up: OpenSSL 3's took 1–2 ms on
// its first use (provider and configuration loading), most of what a
// kernel found in the persistent cache cost to load.
#include "io/sha256.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/SHA256.h>

#include <array>

namespace lanejit::io {
namespace {

std::string hex(const std::array<uint8_t, 32> &digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : digest) {
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

} // namespace

std::string sha256Hex(const void *data, size_t bytes) {
  return hex(
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data), bytes)));
}

} // namespace lanejit::io
