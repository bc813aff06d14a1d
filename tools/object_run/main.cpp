// lanejit-object-run: runs precompiled lanejit kernel objects without LLVM.
//
//   lanejit-object-run MANIFEST
//
// Loads each call's relocatable object with lanejit's own object loader
// (src/jit/object_loader.cpp), calls its entry on .npy inputs on the
// process's pool of threads and writes the outputs as .npy (manifest.h has
// the format). Built for aarch64 by cmake/cross_aarch64.cmake, it runs
// aarch64 kernels compiled on x86 (under qemu-aarch64 in tests/cross, or on
// the device: docs/aarch64.md). Prints one line per failed call and goes on;
// exits 1 when any failed, 2 on a bad manifest.
#include "manifest.h"
#include "run_call.h"

#include <lanejit/error.h>

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
  using namespace lanejit::object_run;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MANIFEST\n", argv[0]);
    return 2;
  }
  std::vector<Call> calls;
  try {
    calls = readManifest(argv[1]);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lanejit-object-run: %s\n", e.what());
    return 2;
  }
  LoadedKernels loaded;
  int failed = 0;
  for (const Call &call : calls) {
    try {
      runCall(call, loaded);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "lanejit-object-run: %s\n", e.what());
      ++failed;
    }
  }
  std::printf("lanejit-object-run: %zu calls, %d failed\n", calls.size(), failed);
  return failed ? 1 : 0;
}
