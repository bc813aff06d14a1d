// Entries specialised for one column count (CompileOptions::
// specialize_columns). A short row pays, per row, for what the generic
// entry derives from C at run time: packet counts, branches over the
// leftover packets, the tail's lane mask, and the combine of accumulators
// that never left the identity. An entry compiled for the call's exact C
// has all of these as constants that LLVM folds away; every element still
// goes through the same operations in the same order, so the bits are the
// generic entry's (tests/runtime/column_entries_test.cpp). The same table
// type holds a kernel's rows-across-lanes entries, one per narrow C
// (codegen/emit_rows_across_lanes.h).
#pragma once

#include <lanejit/launch_abi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace lanejit::cache {

// Rows up to this many columns are short enough for per-row costs to
// matter (at 1024 columns a row is 64-256 packets, the per-row work under
// 3% of it); longer rows keep the generic entry and save a compile.
constexpr int64_t kMaxSpecializedColumns = 1024;
// Specialised entries per kernel: a model has a handful of row widths; a
// caller sweeping C gets the generic entry past this many.
constexpr int kMaxSpecializedEntries = 8;
// Kernel::run compiles a C's entry on the third call with that C (a JIT's
// tiering: a compile costs as much as thousands of short calls, so a C
// called once or twice, as in most tests and one-off calls, never pays
// it). bind() and nativeEntry(C) announce repeated calls: they compile at
// once.
constexpr int kCallsBeforeSpecializing = 3;

// When a C's entry is built: on this request (bind() and nativeEntry(C)
// announce repeated calls), or on the kCallsBeforeSpecializing-th request
// for that C (run()'s tiering).
enum class BuildWhen { OnRepeat, Now };

class ColumnEntries {
public:
  // Entries for 1 <= C <= max_cols, at most `capacity` of them.
  explicit ColumnEntries(int64_t max_cols = kMaxSpecializedColumns,
                         int capacity = kMaxSpecializedEntries)
      : max_cols_(max_cols), capacity_(capacity), slots_(new Slot[capacity]) {}

  // Compiles the entry for `cols`, keeping its code alive in `lifetime`;
  // throws lanejit::Error when it cannot.
  using Build = std::function<NativeEntry(int64_t cols, std::shared_ptr<void> &lifetime)>;

  struct Found {
    NativeEntry entry = nullptr; // null: the generic entry serves this call
    bool settled = true;         // false: ask again on the next call with this C
  };
  // The entry compiled for calls of exactly `cols` columns, built `when`
  // says (requests before an OnRepeat build are unsettled). Null and settled when
  // `cols` is out of range, the table is full or the build failed: the
  // caller then keeps the generic entry. Lock-free once settled;
  // thread-safe.
  // Settled calls return at the lock-free look-up, before a Build (a
  // std::function, which may allocate) is made from `build`.
  template <class BuildFn> Found find(int64_t cols, BuildWhen when, BuildFn &&build) const {
    if (Found known = settled(cols); known.settled)
      return known;
    return findOrBuild(cols, when, Build(std::forward<BuildFn>(build)));
  }
  // find()'s answer when it is already settled: lock-free; unsettled:
  // {nullptr, false}.
  Found settled(int64_t cols) const;

private:
  Found findOrBuild(int64_t cols, BuildWhen when, const Build &build) const;
  struct Slot {
    std::atomic<int64_t> cols{0};
    std::atomic<NativeEntry> entry{nullptr}; // null: generic for this C
  };
  // The published slot of `cols` among slots_[0, used), or null.
  const Slot *published(int64_t cols, int used) const;
  const int64_t max_cols_;
  const int capacity_;
  std::unique_ptr<Slot[]> slots_;
  mutable std::atomic<int> used_{0}; // slots_[0, used_) are published
  mutable std::mutex build_;         // guards what follows, and filling a slot
  mutable std::vector<std::shared_ptr<void>> lifetimes_;
  mutable std::vector<std::pair<int64_t, int>> calls_; // requests per C not yet built
};

} // namespace lanejit::cache
