// The entry a call of a kernel runs: a tune record's choice when one
// applies (tune/tuned_entries.h), else the kernel's own (ownEntry), with
// this thread's last settled answer kept so a repeated shape costs one
// compare.
#pragma once

#include "kernel/kernel_impl.h"

namespace lanejit {

// `when` and `settled` as for ownEntry. Same bits whichever entry it is.
NativeEntry entryFor(const Kernel::Impl &impl, int64_t rows, int64_t cols, cache::BuildWhen when,
                     bool *settled = nullptr);

} // namespace lanejit
