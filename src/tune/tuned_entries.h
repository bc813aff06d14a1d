// How a tune record reaches a kernel's calls (tune/tuned_entries.cpp).
#pragma once

#include "kernel/kernel_impl.h"

namespace lanejit {

// The entry a tune record (or tune_on_first_call) picks for rows x cols,
// or null: the kernel's own choice serves (ownEntry). `when` and `settled`
// as for ownEntry.
NativeEntry tunedEntry(const Kernel::Impl &impl, int64_t rows, int64_t cols,
                       cache::BuildWhen when, bool *settled);

} // namespace lanejit
