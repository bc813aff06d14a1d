// bench/sha256.h — SHA-256 (OpenSSL libcrypto) as lowercase hex: the
// bench's hashes of output payloads, bundle files and the binary. Tens of
// megabytes per case, where OpenSSL's SHA instructions are ~4x faster than
// LLVM's portable digest (src/io/sha256.h, the runtime's, for small keys).
#pragma once

#include <cstddef>
#include <string>

namespace lanejit::bench {

std::string sha256Hex(const void *data, size_t bytes);
// Throws Error(Kind::Io) naming the file when it cannot be read.
std::string sha256File(const std::string &path);

} // namespace lanejit::bench
