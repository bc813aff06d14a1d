// How a tuned configuration reaches a kernel's calls: per C, the entry of a
// kernel compiled with the chosen lanes and pinned to the chosen mapping
// (the launch ABI does not depend on W or the mapping, and the entry is
// called with the same argument block; only the workspace size could
// differ, which is checked). Also the public look-up of a record.
#include "tune/tuned_entries.h"

#include "backend/backend.h"
#include "cache/cache_bound.h"
#include "cache/persistent_cache.h"
#include "io/read_file.h"
#include "tune/tune_record.h"
#include "tune/tuner.h"

#include <lanejit/error.h>

namespace lanejit {

TuneShape TuneShape::parse(const std::string &text) {
  auto bad = [&](const std::string &why) {
    return Error(Error::Kind::Bind, "shape '" + text + "': " + why +
                                        " (expected ROWSxCOLS, e.g. 4096x64, both at least 1)");
  };
  size_t x = text.find_first_of("xX");
  if (x == std::string::npos)
    throw bad("no 'x' between rows and columns");
  auto part = [&](const std::string &digits, const char *what) {
    if (digits.empty() || digits.size() > 12 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw bad(std::string(what) + " '" + digits + "' is not a positive integer");
    int64_t v = std::stoll(digits);
    if (v < 1)
      throw bad(std::string(what) + " must be at least 1");
    return v;
  };
  TuneShape s;
  s.rows = part(text.substr(0, x), "rows");
  s.cols = part(text.substr(x + 1), "columns");
  return s;
}

std::string TuneShape::str() const {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::string TuneCandidate::name() const {
  std::string n = "W" + std::to_string(lanes) + " ";
  if (rows_across_lanes)
    return n + "rows-across-lanes";
  return n + (specialize_columns ? "packet-local C-entry" : "packet-local generic");
}

namespace tuning {

std::shared_ptr<Kernel::Impl> pinnedImpl(const Program &program, const CompileOptions &options,
                                         const TuneCandidate &candidate, int max_lanes) {
  CompileOptions o = options;
  o.tune_on_first_call = false;
  // The widest lanes spelled as 0, as the untuned kernel has them: the
  // same cache key, so no second compile of the same code.
  o.lanes = options.lanes == 0 && candidate.lanes == max_lanes ? 0 : candidate.lanes;
  if (candidate.rows_across_lanes)
    o.rows_across_lanes = true;
  std::shared_ptr<Kernel::Impl> impl = compileImpl(program, o);
  impl->use_tuned = false;
  impl->mapping =
      candidate.rows_across_lanes ? MappingChoice::RowsAcrossLanes : MappingChoice::PacketLocal;
  impl->generic_entry = !candidate.rows_across_lanes && !candidate.specialize_columns;
  return impl;
}

int maxLanes(const CompileOptions &options) {
  return backend::resolveTarget(options.target_triple, options.target_cpu,
                                options.target_features)
      .max_lanes;
}

} // namespace tuning

Kernel compileCandidate(const Program &program, const CompileOptions &options,
                        const TuneCandidate &candidate) {
  if (candidate.lanes != 4 && candidate.lanes != 8 && candidate.lanes != 16)
    throw Error(Error::Kind::Compile, "a candidate's lanes must be 4, 8 or 16");
  return Kernel(tuning::pinnedImpl(program, options, candidate, tuning::maxLanes(options)));
}

TunedRecord findTuned(const Program &program, TuneShape shape, const CompileOptions &options) {
  TunedRecord result;
  result.path = tuning::tuneRecordPath(program, options, shape);
  if (result.path.empty()) {
    result.message = "no tune record: the persistent cache is off (LANEJIT_CACHE) or has no home";
    return result;
  }
  std::optional<std::string> text = io::readFile(result.path);
  if (!text) {
    result.message = "no tune record for " + shape.str() + " (run `lanejit tune`)";
    return result;
  }
  std::optional<tuning::TuneRecordFile> record = tuning::parseTuneRecord(*text);
  result.found = true;
  if (!record) {
    result.message = "tune record " + result.path + " is damaged: ignored";
    return result;
  }
  result.choice = record->choice;
  result.measured = record->shape;
  result.median_ns = record->median_ns;
  result.untuned_ns = record->untuned_ns;
  tuning::TuneIdentity here = tuning::tuneIdentity(options);
  if (record->build != here.build) {
    result.message = "tune record " + result.path + " ignored: written by another lanejit build (" +
                     record->build + "; this is " + here.build + ")";
    return result;
  }
  if (record->cpu != here.cpu || record->features != here.features) {
    result.message = "tune record " + result.path + " ignored: measured for another target (cpu " +
                     record->cpu + ", features " + record->features + "; this is cpu " + here.cpu +
                     ", features " + here.features + ")";
    return result;
  }
  if (record->choice.lanes > tuning::maxLanes(options)) {
    result.message = "tune record " + result.path + " ignored: its W exceeds this target's";
    return result;
  }
  result.applies = true;
  persistent::markUsed(result.path); // recently used: the folder's bound keeps it longer
  result.message = "tune record " + result.path + " (measured at " + record->shape.str() +
                   "): " + record->choice.name();
  return result;
}

NativeEntry tunedEntry(const Kernel::Impl &impl, int64_t rows, int64_t cols,
                       cache::BuildWhen when, bool *settled) {
  const CompiledCode &code = *impl.code;
  if (!impl.use_tuned || !code.cannot_run_here.empty())
    return nullptr;
  // Every call with a settled C ends at the table's lock-free look-up:
  // asking for the cache folder (environment, paths) cost runEntry 1 µs
  // per call at 17x65. The folder is looked at once per C, in the build.
  bool measure = impl.options.tune_on_first_call;
  cache::BuildWhen build = measure ? cache::BuildWhen::Now : when;
  auto found = impl.tuned.find(
      cols, build, [&](int64_t c, std::shared_ptr<void> &lifetime) -> NativeEntry {
        if (!measure && persistent::directory().empty())
          return nullptr;
        TuneShape shape{std::max<int64_t>(rows, 1), c};
        std::optional<TuneCandidate> choice;
        if (TunedRecord record = findTuned(impl.program, shape, impl.options); record.applies)
          choice = record.choice;
        else if (measure)
          choice = tuning::tuneChoice(impl.program, shape, impl.options);
        if (!choice)
          return nullptr;
        auto pinned = tuning::pinnedImpl(impl.program, impl.options, *choice,
                                          tuning::maxLanes(impl.options));
        // The call's workspace is sized for this kernel's plan.
        if (lower::workspaceFloats(pinned->code->workspace, c) >
            lower::workspaceFloats(code.workspace, c))
          return nullptr;
        NativeEntry entry = ownEntry(*pinned, rows, c, cache::BuildWhen::Now);
        lifetime = std::move(pinned);
        return entry;
      });
  if (settled)
    *settled = found.settled;
  return found.entry;
}

} // namespace lanejit
