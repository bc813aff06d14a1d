// bench/compile_times.h — what compiling a case's kernel costs a user, each
// in a fresh process (lanejit_compile_probe): cold (an empty persistent
// cache, so LLVM starts and runs), warm (a second kernel in that process:
// LLVM already started) and cached (a new process finding the kernel in the
// persistent cache the cold run filled).
#pragma once

#include "records.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <optional>
#include <string>

namespace lanejit::bench {

// Measures `program` under `options` in two child processes sharing a
// temporary cache directory; empty when the probe is missing or fails
// (`why` says which).
std::optional<CompileTimesRecord> measureCompileTimes(const Program &program,
                                                      const CompileOptions &options,
                                                      std::string *why = nullptr);

} // namespace lanejit::bench
