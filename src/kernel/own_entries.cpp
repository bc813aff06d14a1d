// The entry a kernel's own configuration gives a shape (kernel/kernel_impl.h):
// rows across lanes, one specialised for C, or the generic one.
#include "kernel/kernel_impl.h"

#include <atomic>

namespace lanejit {
namespace {

std::atomic<bool> g_forceRowsAcrossLanes{false};

// The packet-local entry specialised for `cols` (cache/column_entries.h),
// or the generic one.
NativeEntry entryForColumns(const Kernel::Impl &impl, int64_t cols, cache::BuildWhen when,
                            bool *settled) {
  const CompiledCode &code = *impl.code;
  if (!impl.options.specialize_columns || impl.generic_entry || !code.cannot_run_here.empty())
    return code.entry;
  auto found = code.by_columns.find(cols, when, [&](int64_t c, std::shared_ptr<void> &lifetime) {
    backend::Native native =
        driver::compileEntry(impl.program, impl.options, driver::EntryKind::Columns, c);
    lifetime = std::move(native.lifetime);
    return native.entry;
  });
  if (settled)
    *settled = found.settled;
  return found.entry ? found.entry : code.entry;
}

// The rows-across-lanes entry for `cols`, or null when the kernel's rule
// (or the tests' hook) does not pick it for rows x cols or it cannot be
// built (that C then runs packet-local).
NativeEntry rowsAcrossLanesEntry(const Kernel::Impl &k, int64_t rows, int64_t cols) {
  const CompiledCode &code = *k.code;
  int64_t limit = rows >= code.rows_min_rows ? code.rows_max_cols : 0;
  if (g_forceRowsAcrossLanes.load(std::memory_order_relaxed) && k.options.rows_across_lanes &&
      code.cannot_run_here.empty())
    limit = lower::kMaxRowsAcrossLanesColumns;
  // A pinned configuration (the tuner's) overrides the rule both ways.
  if (k.mapping == MappingChoice::PacketLocal)
    limit = 0;
  if (k.mapping == MappingChoice::RowsAcrossLanes && k.options.rows_across_lanes)
    limit = code.rows_size_max_cols;
  if (cols < 1 || cols > limit)
    return nullptr;
  // Compiled at the first call: the rule picks it only where it wins by
  // 2-8x per row (docs/architecture.md, "Rows across lanes").
  return code.rows_across_lanes
      .find(cols, cache::BuildWhen::Now,
            [&](int64_t c, std::shared_ptr<void> &lifetime) {
              backend::Native native = driver::compileEntry(
                  k.program, k.options, driver::EntryKind::RowsAcrossLanes, c);
              lifetime = std::move(native.lifetime);
              return native.entry;
            })
      .entry;
}

} // namespace

void forceRowsAcrossLanes(bool on) {
  g_forceRowsAcrossLanes.store(on, std::memory_order_relaxed);
  launch::g_launchSettingsEpoch.fetch_add(1, std::memory_order_relaxed);
}
bool rowsAcrossLanesForced() {
  return g_forceRowsAcrossLanes.load(std::memory_order_relaxed);
}

NativeEntry ownEntry(const Kernel::Impl &impl, int64_t rows, int64_t cols, cache::BuildWhen when,
                     bool *settled) {
  if (settled)
    *settled = true;
  if (NativeEntry e = rowsAcrossLanesEntry(impl, rows, cols))
    return e;
  return entryForColumns(impl, cols, when, settled);
}

} // namespace lanejit
