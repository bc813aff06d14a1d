// The tuner's record on disk: the configuration chosen for one (program,
// options, shape), next to the persistent object cache (same folder, same
// on/off switch). Its file name is the SHA-256 of the key (program text,
// the options' key, C and R's power-of-two class); the file says which
// target and lanejit build measured it, and a record from another one is
// ignored with a reason. A wrong or stale record can only cost speed,
// never a bit: every configuration computes the same outputs. Written to a
// temporary name and renamed into place, as the object cache is, and
// counted in the folder's size bound like an object (cache_bound.h): an
// evicted record means tuning again.
#pragma once

#include <lanejit/tune.h>

#include <optional>
#include <string>

namespace lanejit::tuning {

struct TuneRecordFile {
  std::string program; // name, for people reading the file
  std::string build, cpu, features;
  TuneShape shape; // measured at
  int threads = 1;
  TuneCandidate choice;
  double median_ns = 0, untuned_ns = 0;
};

// The record's path for (program, options, shape), or "" when the cache
// is off or has no home.
std::string tuneRecordPath(const Program &program, const CompileOptions &options, TuneShape shape);

// Serialised form, and its inverse (nullopt on anything malformed).
std::string formatTuneRecord(const TuneRecordFile &record);
std::optional<TuneRecordFile> parseTuneRecord(const std::string &text);

// Writes `record` to `path` atomically; false when it could not.
bool writeTuneRecord(const std::string &path, const TuneRecordFile &record);

// This process's target and build, as a record states them.
struct TuneIdentity {
  std::string build, cpu, features;
};
TuneIdentity tuneIdentity(const CompileOptions &options);

} // namespace lanejit::tuning
