// SHA-256 through LLVM's implementation (io/sha256.h). LLVM is linked
// anyway, and its digest needs no start-up: OpenSSL 3's took 1–2 ms on
// its first use (provider and configuration loading), most of what a
// kernel found in the persistent cache cost to load.
#include "io/sha256.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

#include <array>

namespace lanejit::io {

std::string lowerHex(const unsigned char *bytes, size_t count) {
  return llvm::toHex(llvm::ArrayRef<uint8_t>(bytes, count), /*LowerCase=*/true);
}

std::string sha256Hex(const void *data, size_t bytes) {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data), bytes));
  return lowerHex(digest.data(), digest.size());
}

} // namespace lanejit::io
