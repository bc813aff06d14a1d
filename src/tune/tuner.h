// The tuner's internals (the public API is lanejit/tune.h): kernels pinned
// to one configuration, and a tune() for tune_on_first_call.
#pragma once

#include "kernel/kernel_impl.h"

#include <lanejit/tune.h>

#include <memory>
#include <optional>

namespace lanejit::tuning {

// A kernel compiled with `candidate`'s lanes whose calls all run its
// mapping and entry kind; it never reads tune records.
std::shared_ptr<Kernel::Impl> pinnedImpl(const Program &program, const CompileOptions &options,
                                         const TuneCandidate &candidate, int max_lanes);

// The widest W the options' target has.
int maxLanes(const CompileOptions &options);

// tune() with the default settings; nothing when it fails (the call then
// keeps the kernel's own configuration).
std::optional<TuneCandidate> tuneChoice(const Program &program, TuneShape shape,
                                        const CompileOptions &options);

} // namespace lanejit::tuning
