// The entry a call runs (runtime/entry_choice.h).
#include "runtime/entry_choice.h"

#include "tune/tuned_entries.h"

namespace lanejit {
namespace {

// The settled entry this thread found last: a repeated call of the same
// kernel (by serial number, never reused in a process) and class of shape
// then costs one compare instead of the tuned, rows-across-lanes and C
// look-ups (runEntry at 17x65 was 5-16% behind the bare entry). The class
// is what the look-ups read of a shape: C, and whether R reaches the rows-
// across-lanes rule's minimum (or the tests' hook forces that mapping).
struct LastEntry {
  uint64_t kernel = 0; // 0: nothing kept
  int64_t cols = 0;
  bool narrow = false, forced = false;
  NativeEntry entry = nullptr;
};
thread_local LastEntry t_lastEntry;

} // namespace

NativeEntry entryFor(const Kernel::Impl &impl, int64_t rows, int64_t cols, cache::BuildWhen when,
                     bool *settled) {
  bool narrow = rows >= impl.code->rows_min_rows;
  bool forced = rowsAcrossLanesForced();
  LastEntry &last = t_lastEntry;
  if (last.kernel == impl.serial && last.cols == cols && last.narrow == narrow &&
      last.forced == forced) {
    if (settled)
      *settled = true;
    return last.entry;
  }
  bool tunedSettled = true, columnsSettled = true;
  NativeEntry e = tunedEntry(impl, rows, cols, when, &tunedSettled);
  if (!e)
    e = ownEntry(impl, rows, cols, when, &columnsSettled);
  // Unsettled: a later call may read a tune record or find the C's entry.
  bool done = tunedSettled && columnsSettled;
  if (done)
    last = {impl.serial, cols, narrow, forced, e};
  if (settled)
    *settled = done;
  return e;
}

} // namespace lanejit
