// Shared objects for the inspect tests, built at test time by the system
// C++ compiler driver (`c++`), as TorchInductor builds its kernels.
#pragma once

#include "support/command_line.h"

#include <fstream>
#include <string>

namespace lanejit::test {

// C++ with a vectorisable loop that calls libm's expf through the PLT, the
// shape of an Inductor kernel (a softmax row: a max reduction, then exp),
// and an unrelated function. -ffast-math (Inductor compiles with fast math
// too) lets the exp loop vectorise: with glibc, through libmvec's vector
// variant (_ZGVeN16v_expf); the max loop vectorises without it.
inline const char *kKernelSource = R"(
#include <math.h>
extern "C" void kernel(const float *x, float *y, long n) {
  float m = x[0];
  for (long i = 1; i < n; ++i)
    m = fmaxf(m, x[i]);
  for (long i = 0; i < n; ++i)
    y[i] = expf(x[i] - m);
}
extern "C" int unrelated(int a) { return a * 3 + 1; }
)";
// -O3: at -O2, GCC 12 vectorises no loop that needs a scalar epilogue.
inline const char *kKernelFlags = "-O3 -ffast-math -mavx512f -mfma -mprefer-vector-width=512 "
                                  "-shared -fPIC -fno-omit-frame-pointer";

inline bool haveCxx() {
  return shell("c++ --version >/dev/null 2>&1") == 0;
}

// The bytes of `scratch`/`name`.so built from `source`, written to
// `name`.`extension` (cpp or s); "" when the compiler fails.
inline std::string buildSharedObject(const ScratchDir &scratch, const std::string &name,
                                     const std::string &extension, const std::string &source,
                                     const std::string &flags) {
  std::string input = scratch.file(name + "." + extension), output = scratch.file(name + ".so");
  {
    std::ofstream out(input);
    out << source;
  }
  if (shell("c++ " + flags + " '" + input + "' -o '" + output + "'") != 0)
    return "";
  return slurp(output);
}

} // namespace lanejit::test
