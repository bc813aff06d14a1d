// One manifest call: its object loaded (once per file and entry), its
// buffers read from .npy files into 64-byte-aligned memory, the entry run
// over the rows on the pool, the outputs written as .npy.
#pragma once

#include "manifest.h"

#include "jit/jit.h"

#include <map>
#include <string>
#include <utility>

namespace lanejit::object_run {

// Kernels loaded so far, by (object path, entry); they stay mapped for the
// life of the process.
using LoadedKernels = std::map<std::pair<std::string, std::string>, jit::LinkedCode>;

// Throws lanejit::Error naming the call and what failed (a file, the
// loader's refusal, a buffer too small for its shape and stride, a
// workspace overrun).
void runCall(const Call &call, LoadedKernels &loaded);

} // namespace lanejit::object_run
