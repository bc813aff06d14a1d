// A compile's objects in the persistent cache (cache/persistent_cache.h):
// the key that names everything deciding an object's bytes, and linking
// a stored object instead of compiling it again.
#pragma once

#include "backend/backend.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <functional>
#include <string>

namespace lanejit::driver {

// The persistent cache's key for (program, options, target), or "" to
// bypass the cache (timing LLVM's passes needs LLVM to run). Entries for
// one C append their own line.
std::string persistentKey(const Program &program, const CompileOptions &options,
                          const backend::Target &target);

// The persistent cache's object for `key` when it has a usable one, else
// `compile()`'s, which is then stored under `key` ("" : cache off).
// `fromDisk` (optional) says which.
backend::Native linkedOrCompiled(const std::string &key,
                                 const std::function<backend::Native()> &compile,
                                 bool *fromDisk = nullptr);

} // namespace lanejit::driver
