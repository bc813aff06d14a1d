// fuzz/fuzz_check.h — how a fuzz target reports a finding: print what broke
// and abort, which libFuzzer records as a crash (saving the input) and the
// replay driver turns into a failed test.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lanejit::fuzz {

[[noreturn]] inline void finding(const std::string &what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void require(bool ok, const std::string &what) {
  if (!ok)
    finding(what);
}

} // namespace lanejit::fuzz
