// io/sha256.h — SHA-256 (OpenSSL libcrypto) as lowercase hex: the persistent
// kernel cache's checksums, and the bench's hashes of output
// payloads, bundle files and the binary.
#pragma once

#include <cstddef>
#include <string>

namespace lanejit::io {

std::string sha256Hex(const void *data, size_t bytes);
// Throws Error(Kind::Io) naming the file when it cannot be read.
std::string sha256File(const std::string &path);

} // namespace lanejit::io
