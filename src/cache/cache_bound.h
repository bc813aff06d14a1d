// The size bound of the persistent cache's folder (persistent_cache.h):
// least recently used files go first when lanejit's files pass the cap.
//
// A hit sets the file's modification time to now (atime is often not kept:
// noatime, relatime), so the oldest modification time is the least recently
// used. Stores keep a running total in the folder's usage file (a few bytes,
// under flock); only when it passes the cap, when the last scan is a day old,
// or when the file is missing or damaged does a store scan the folder, and
// then it removes the least recently used entries until lanejit's files are
// at 80% of the cap, so the next scan is at least a fifth of the cap of
// stores away. Loads never scan. One process scans at a time; the others
// skip. A file another process deletes under us is a miss, never an error.
//
// Only lanejit's own files are counted or removed, by their names:
// "<64 hex digits>.o.cache" (objects), "<64 hex digits>.tune" (tune
// records: a missing one means tuning again), those names plus
// ".tmp.<pid>.<serial>" (being written; removed when an hour old, left by
// a crashed process) and the usage file. Anything else is never touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lanejit::persistent {

enum class FileKind { Object, TuneRecord, Temporary, Usage, Foreign };

// What the cache folder's file `name` is, by its name alone.
FileKind kindOf(const std::string &name);

// The usage file's name in the folder.
inline constexpr const char *kUsageFile = "lanejit.usage";

// 256 MiB: about 20,000 kernels (objects take 4-16 KiB on disk), twice
// the full test suite's 9,513 (124 MiB), so one build's suite stays cached
// while earlier builds' entries go; small on any disk.
inline constexpr uint64_t kDefaultCapBytes = uint64_t{256} << 20;

// LANEJIT_CACHE_MAX_MB's text as bytes: a non-negative decimal number of
// MiB ("512", "0.5"); 0 means unbounded; nothing for anything else.
std::optional<uint64_t> parseCapMb(const std::string &text);

struct Cap {
  uint64_t bytes = kDefaultCapBytes; // 0: unbounded
  bool from_environment = false;     // LANEJIT_CACHE_MAX_MB set it
  std::string ignored;               // LANEJIT_CACHE_MAX_MB's text when it was not a size
};
// The cap LANEJIT_CACHE_MAX_MB sets: unset, empty or not a size (then
// `ignored` says what it was), the default; a typo never unbounds the
// folder nor turns the cache off.
Cap capFromEnvironment();

// lanejit's files in a folder, and what else is there.
struct Usage {
  uint64_t objects = 0, tune_records = 0, temporaries = 0;
  uint64_t bytes = 0;   // of those files: disk usage, at least their length
  uint64_t foreign = 0; // files that are not lanejit's
};
Usage usage(const std::string &dir);

// What a scan prunes down to: 80% of `cap`, so the next scan is a fifth
// of the cap of stores away.
uint64_t lowWater(uint64_t cap);

struct Pruned {
  uint64_t removed_files = 0, removed_bytes = 0;
  uint64_t bytes_after = 0; // lanejit's files left
};
// Scans `dir` once: removes temporaries an hour old, and when lanejit's
// files take more than `cap` bytes (0: unbounded), the least recently used
// objects and tune records until they take at most 80% of it.
Pruned prune(const std::string &dir, uint64_t cap);

// After a store renamed `file` into `dir`: adds its bytes to the running
// total and prunes when that says so (see above). Silent on failure.
void noteStored(const std::string &dir, const std::string &file);

// A hit on `file`: its modification time becomes now.
void markUsed(const std::string &file);

// Removes every file of lanejit's from `dir` (temporaries of any age, the
// usage file); what was removed.
Usage clear(const std::string &dir);

} // namespace lanejit::persistent
