// The C library routines a kernel may import (jit.h): apart from jit.cpp so
// that the object loader builds without LLVM (the aarch64 runner,
// tests/cross).
#include "jit/jit.h"

#include <cstring>

namespace lanejit::jit {

const std::vector<RuntimeSymbol> &runtimeSymbols() {
  static const std::vector<RuntimeSymbol> symbols = {
      {"memcpy", reinterpret_cast<void *>(&::memcpy)},
      {"memmove", reinterpret_cast<void *>(&::memmove)},
      {"memset", reinterpret_cast<void *>(&::memset)},
  };
  return symbols;
}

} // namespace lanejit::jit
