// What a compile produces for one (program, code-relevant options, target),
// and the entries built from the same plan later, on first use: one per C
// (short rows), rows across lanes per narrow C, the column split. Shared by
// every Kernel that hits the same kernel-cache entry; the JIT frees the code
// when the last holder lets go.
#pragma once

#include "backend/backend.h"
#include "cache/column_entries.h"
#include "cache/kernel_cache.h"
#include "lower/choose_mapping.h"
#include "lower/row_cost.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>
#include <lanejit/report.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lanejit {

struct CompiledCode : CachedCode {
  NativeEntry entry = nullptr;
  // Why this machine cannot run the code ("" when it can): it was compiled
  // for a CPU (target_cpu, +features) with features this one lacks. Such a
  // kernel can be inspected and written out by `lanejit aot`, not called.
  std::string cannot_run_here;
  std::shared_ptr<void> code_lifetime; // jit::LinkedCode::lifetime
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
  // columns (Kernel::Impl::partEntry); null until then, or when it cannot
  // be built.
  mutable std::once_flag part_once;
  mutable std::atomic<lower::NativePartEntry> part{nullptr};
  mutable std::shared_ptr<void> part_lifetime;
  // Entries compiled for one column count, on first use: packet-local
  // ones specialised for short rows (specialize_columns), and rows across
  // lanes (lower/choose_mapping.h) for calls with 1 <= C <= rows_max_cols
  // and at least rows_min_rows rows.
  cache::ColumnEntries by_columns{cache::kMaxSpecializedColumns, cache::kMaxSpecializedEntries};
  cache::ColumnEntries rows_across_lanes{lower::kMaxRowsAcrossLanesColumns,
                                         int(lower::kMaxRowsAcrossLanesColumns)};
  int64_t rows_max_cols = 0, rows_min_rows = 0;
  // The widest C a rows-across-lanes entry may be built for (the code-size
  // limit, not the speed rule): what a pinned configuration may use.
  int64_t rows_size_max_cols = 0;

  size_t bytes() const override;
};

namespace driver {

struct CodeLookup {
  std::shared_ptr<const CompiledCode> code;
  bool cache_hit = false; // from the kernel cache (found, or another thread's build)
};

// The code for (program, options): from the kernel cache, else verified,
// lowered, compiled (or linked from the persistent cache) and cached.
// Throws Error(Kind::Compile) on a bad program or options.
CodeLookup compiledCode(const Program &program, const CompileOptions &options);

// The entries of the same plan built after the first (each lowers again,
// which gives the same plan; the JIT keeps no module after linking).
using backend::EntryKind;
// Columns or RowsAcrossLanes, for exactly `cols`, through the persistent
// cache.
backend::Native compileEntry(const Program &program, const CompileOptions &options,
                             EntryKind kind, int64_t cols);
// The column-split entry (launch/column_split.h); throws Error when it
// cannot be built.
backend::NativePart compilePartEntry(const Program &program, const CompileOptions &options);
// Kernel::dump's code stages (llvm-unoptimized, llvm, asm) of one entry.
std::string dumpEntry(const Program &program, const CompileOptions &options,
                      const std::string &stage, EntryKind kind, int64_t cols = 0);

} // namespace driver
} // namespace lanejit
