// io/sha256.h — SHA-256 (LLVM's) as lowercase hex: the persistent kernel
// cache's file names and checksums and the tune records' names, all a few
// kilobytes. The bench hashes its tens of megabytes with OpenSSL
// (bench/sha256.h).
#pragma once

#include <cstddef>
#include <string>

namespace lanejit::io {

std::string sha256Hex(const void *data, size_t bytes);

} // namespace lanejit::io
