// Specialised entries per column count (cache/column_entries.h).
#include "cache/column_entries.h"

#include <lanejit/error.h>

#include <algorithm>

namespace lanejit::cache {

const ColumnEntries::Slot *ColumnEntries::published(int64_t cols, int used) const {
  for (int i = 0; i < used; ++i)
    if (slots_[i].cols.load(std::memory_order_relaxed) == cols)
      return &slots_[i];
  return nullptr;
}

ColumnEntries::Found ColumnEntries::settled(int64_t cols) const {
  if (cols < 1 || cols > max_cols_)
    return {};
  if (const Slot *s = published(cols, used_.load(std::memory_order_acquire)))
    return {s->entry.load(std::memory_order_relaxed)};
  return {nullptr, false};
}

ColumnEntries::Found ColumnEntries::findOrBuild(int64_t cols, BuildWhen when,
                                                 const Build &build) const {
  // A slot's fields are written before used_ publishes it (release).
  std::lock_guard<std::mutex> lock(build_);
  int used = used_.load(std::memory_order_relaxed);
  if (const Slot *s = published(cols, used))
    return {s->entry.load(std::memory_order_relaxed)};
  if (used == capacity_)
    return {};
  auto counted = std::find_if(calls_.begin(), calls_.end(),
                              [&](const std::pair<int64_t, int> &c) { return c.first == cols; });
  if (counted == calls_.end()) {
    if (calls_.size() >= 64) // a caller sweeping C: forget the counts
      calls_.clear();
    counted = calls_.insert(calls_.end(), {cols, 0});
  }
  if (when == BuildWhen::OnRepeat && ++counted->second < kCallsBeforeSpecializing)
    return {nullptr, false};
  calls_.erase(counted);
  NativeEntry entry = nullptr;
  try {
    std::shared_ptr<void> lifetime;
    entry = build(cols, lifetime);
    lifetimes_.push_back(std::move(lifetime));
  } catch (const Error &) {
    entry = nullptr; // remembered: this C keeps the generic entry
  }
  slots_[used].cols.store(cols, std::memory_order_relaxed);
  slots_[used].entry.store(entry, std::memory_order_relaxed);
  used_.store(used + 1, std::memory_order_release);
  return {entry};
}

} // namespace lanejit::cache
