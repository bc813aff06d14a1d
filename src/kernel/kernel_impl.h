// The kernel behind a Kernel handle: its program and options, the code the
// driver compiled, and the entry its own configuration gives a shape. The
// tuner (tune/) and the run path (runtime/) build on it.
#pragma once

#include "cache/column_entries.h"
#include "driver/compiled_code.h"
#include "launch/row_launch.h"

#include <lanejit/kernel.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lanejit {

// The mapping a kernel's calls use: the rule's (lower/choose_mapping.h), or
// one pinned by a tuned configuration (tune/tuner.h).
enum class MappingChoice { Rule, PacketLocal, RowsAcrossLanes };

// Column counts a tuned configuration may be recorded for, and how many
// per kernel (each its own entry from another compile).
constexpr int64_t kMaxTunedColumns = int64_t{1} << 31;
constexpr int kMaxTunedEntries = 16;

uint64_t nextSerial();

// The kernel behind a Kernel handle. It is the source of its calls'
// column-split entry (launch::PartEntrySource), compiled on first use;
// null when options.column_split is off or it cannot be built (the call
// then splits rows only).
struct Kernel::Impl : launch::PartEntrySource {
  // Names this kernel for run()'s last-call memory (runtime/prepared_call.h);
  // never reused in a process, unlike an address.
  uint64_t serial = nextSerial();
  Program program;
  CompileOptions options;
  std::shared_ptr<const CompiledCode> code;
  CompileReport report; // code->report with this kernel's block rows, time, cache_hit
  MappingChoice mapping = MappingChoice::Rule;
  bool generic_entry = false; // pinned: packet-local calls skip the C entries
  // Whether calls look for a tune record (tune/tuned_entries.h); off
  // in the kernels a record's choice is run by (they are that choice).
  bool use_tuned = true;
  // Per C: the entry of the recorded (or, with tune_on_first_call,
  // measured) fastest configuration, or null for the kernel's own.
  cache::ColumnEntries tuned{kMaxTunedColumns, kMaxTunedEntries};

  lower::NativePartEntry partEntry() const override;
};

// compile() without the wrapper: the code from the driver (kernel cache
// first). The tuner pins its kernels' mapping.
std::shared_ptr<Kernel::Impl> compileImpl(const Program &program, const CompileOptions &options);

// The entry the kernel's own configuration gives a call of rows x cols:
// the rows-across-lanes entry for that C when the kernel's mapping rule (or
// a pinned mapping) picks it, compiled on the first such call, else the
// packet-local entry specialised for that C (cache/column_entries.h) when
// the options allow it, else code->entry. Same bits. `when`: when a C's
// specialised entry is built (cache::BuildWhen); `settled` (optional) says
// whether a later request could get another entry. Tune records are the
// run path's (runtime/entry_choice.h).
NativeEntry ownEntry(const Kernel::Impl &impl, int64_t rows, int64_t cols, cache::BuildWhen when,
                     bool *settled = nullptr);
// Tests: rows across lanes for every C up to lower::kMaxRowsAcrossLanesColumns
// and any row count in kernels whose rows_across_lanes switch is on,
// whatever the rule says.
void forceRowsAcrossLanes(bool on);
bool rowsAcrossLanesForced();

} // namespace lanejit
