// Kernel internals shared by compile.cpp (which makes them) and kernel.cpp
// (which runs them).
#pragma once

#include "lower/choose_mapping.h"
#include "runtime/column_entries.h"
#include "launch/row_launch.h"

#include <lanejit/kernel.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lanejit {

// Counts the compiled kernels alive (KernelCacheStats::live_code).
struct LiveCodeCount {
  LiveCodeCount();
  ~LiveCodeCount();
  LiveCodeCount(const LiveCodeCount &) = delete;
  LiveCodeCount &operator=(const LiveCodeCount &) = delete;
};

// What the JIT produced for one (program, code-relevant options, target);
// shared by every Kernel that hits the same cache entry. The JIT frees the
// code when the last holder (cache entry or Kernel) lets go.
struct CompiledCode {
  NativeEntry entry = nullptr;
  // Why this machine cannot run the code ("" when it can): it was compiled
  // for a CPU (target_cpu, +features) with features this one lacks. Such a
  // kernel can be inspected and written out by `lanejit aot`, not called.
  std::string cannot_run_here;
  std::shared_ptr<void> code_lifetime; // jit::LinkedCode::lifetime
  LiveCodeCount counted;
  Program lowered;  // after the pass pipeline
  std::string plan; // lower::describePlan of the final plan
  // Every column offset and count the program's nodes use, with the node:
  // each must be a non-negative integer for the bound C (checked per call,
  // since the entry's integer division would silently truncate).
  std::vector<std::pair<Dim, std::string>> dims;
  // The workspace's slots (lower::workspaceFloats gives its size for a C).
  std::vector<Dim> workspace;
  lower::RowCost row_cost; // how many threads a call is worth
  CompileReport report;
  std::string object;       // the ELF object the JIT linked
  std::string entry_symbol; // the entry's name in it
  std::string pass_log;     // Kernel::dump("passes")
  // The column-split entry, compiled on the first call that splits
  // columns (partEntryOf); null until then, or when it cannot be built.
  mutable std::once_flag part_once;
  mutable std::atomic<lower::NativePartEntry> part{nullptr};
  mutable std::shared_ptr<void> part_lifetime;
  // Entries compiled for one column count, on first use: packet-local
  // ones specialised for short rows (specialize_columns), and rows across
  // lanes (lower/choose_mapping.h) for calls with 1 <= C <= rows_max_cols
  // and at least rows_min_rows rows.
  runtime::ColumnEntries by_columns{runtime::kMaxSpecializedColumns,
                                    runtime::kMaxSpecializedEntries};
  runtime::ColumnEntries rows_across_lanes{lower::kMaxRowsAcrossLanesColumns,
                                           int(lower::kMaxRowsAcrossLanesColumns)};
  int64_t rows_max_cols = 0, rows_min_rows = 0;
  // The widest C a rows-across-lanes entry may be built for (the code-size
  // limit, not the speed rule): what a pinned configuration may use.
  int64_t rows_size_max_cols = 0;
};

// The mapping a kernel's calls use: the rule's (lower/choose_mapping.h), or
// one pinned by a tuned configuration (runtime/tuner.h).
enum class MappingChoice { Rule, PacketLocal, RowsAcrossLanes };

// Column counts a tuned configuration may be recorded for, and how many
// per kernel (each its own entry from another compile).
constexpr int64_t kMaxTunedColumns = int64_t{1} << 31;
constexpr int kMaxTunedEntries = 16;

uint64_t nextSerial();

// The kernel behind a Kernel handle. It is the source of its calls'
// column-split entry (launch::PartEntrySource), compiled on first use
// (runtime/compile.cpp); null when options.column_split is off or it
// cannot be built (the call then splits rows only).
struct Kernel::Impl : launch::PartEntrySource {
  // Names this kernel for run()'s last-call memory (runtime/binding.h);
  // never reused in a process, unlike an address.
  uint64_t serial = nextSerial();
  Program program;
  CompileOptions options;
  std::shared_ptr<const CompiledCode> code;
  CompileReport report; // code->report with this kernel's block rows, time, cache_hit
  MappingChoice mapping = MappingChoice::Rule;
  bool generic_entry = false; // pinned: packet-local calls skip the C entries
  // Whether calls look for a tune record (runtime/tuned_entries.cpp); off
  // in the kernels a record's choice is run by (they are that choice).
  bool use_tuned = true;
  // Per C: the entry of the recorded (or, with tune_on_first_call,
  // measured) fastest configuration, or null for the kernel's own.
  runtime::ColumnEntries tuned{kMaxTunedColumns, kMaxTunedEntries};

  lower::NativePartEntry partEntry() const override;
};

// compile() without the wrapper: the tuner pins its kernels' mapping.
std::shared_ptr<Kernel::Impl> compileImpl(const Program &program, const CompileOptions &options);

// The entry a tune record (or tune_on_first_call) picks for rows x cols,
// or null: the kernel's own choice serves (runtime/tuned_entries.cpp).
// `now` and `settled` as for entryFor.
NativeEntry tunedEntry(const Kernel::Impl &impl, int64_t rows, int64_t cols, bool now,
                       bool *settled);

// The entry a call of rows x cols runs: the rows-across-lanes entry for
// that C when the kernel's mapping rule picks it (compiled on the first
// such call), else the packet-local entry specialised for that C
// (runtime/column_entries.h) when the options allow it, else code->entry.
// Same bits. `now`: a specialised packet-local entry is compiled on this
// request, else on the kCallsBeforeSpecializing-th; `settled` (optional)
// says whether a later request could get another entry.
NativeEntry entryFor(const Kernel::Impl &impl, int64_t rows, int64_t cols, bool now,
                     bool *settled = nullptr);
// Tests: rows across lanes for every C up to lower::kMaxRowsAcrossLanesColumns
// and any row count in kernels whose rows_across_lanes switch is on,
// whatever the rule says.
void forceRowsAcrossLanes(bool on);
bool rowsAcrossLanesForced();

// Largest number of buffers (inputs + outputs) a program may have; lets a
// call keep its argument block on the stack.
constexpr size_t kMaxBuffers = 64;

namespace runtime {
// Kernel::runEntry past its remembered last call: checks, picks the entry
// for the shape, and runs it serially (remembering it) or on the pool.
void runEntryUncached(const Kernel::Impl &impl, const LaunchArgs &args, int threads);
} // namespace runtime

} // namespace lanejit
