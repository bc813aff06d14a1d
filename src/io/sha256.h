// io/sha256.h — SHA-256 (LLVM's) as lowercase hex: the persistent kernel
// cache's file names and checksums and the tune records' names, all a few
// kilobytes. The bench hashes its tens of megabytes with OpenSSL
// (bench/sha256.h).
#pragma once

#include <cstddef>
#include <string>

namespace lanejit::io {

std::string sha256Hex(const void *data, size_t bytes);
// `bytes` as lowercase hex: how every digest here is written.
std::string lowerHex(const unsigned char *bytes, size_t count);

} // namespace lanejit::io
