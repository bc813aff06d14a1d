// tune(): compile the candidates, check their bits, time them in paired,
// interleaved rounds within the budget, keep the fastest, record it.
#include "tune/tuner.h"

#include "cache/column_entries.h"
#include "driver/lowered.h"
#include "launch/aligned_workspace.h"
#include "launch/row_launch.h"
#include "tune/tune_record.h"

#include <lanejit/check.h>
#include <lanejit/error.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace lanejit {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Rounds of visits: enough for a median, bounded so a large budget on a
// fast kernel still ends.
constexpr int kMaxRounds = 31;
// One visit's calls last about this long (shorter when the budget is
// small, so that a few rounds fit).
constexpr double kMaxVisitMs = 10, kMinVisitMs = 0.05;
// Another configuration replaces the untuned one only when its median is
// below this fraction of the untuned median.
constexpr double kMinGain = 0.97;

struct Contender {
  size_t index = 0; // into the candidates
  std::shared_ptr<Kernel::Impl> impl;
  NativeEntry entry = nullptr;
  int64_t reps = 1;
  std::vector<double> ns; // per call, one per visit
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The untuned configuration for this shape: what the kernel's rule picks.
TuneCandidate untunedOf(const Kernel::Impl &k, TuneShape shape, int max_lanes) {
  const CompiledCode &code = *k.code;
  TuneCandidate c;
  c.lanes = k.options.lanes ? k.options.lanes : max_lanes;
  c.rows_across_lanes = shape.cols <= code.rows_max_cols && shape.rows >= code.rows_min_rows;
  c.specialize_columns = !c.rows_across_lanes && k.options.specialize_columns &&
                         shape.cols <= cache::kMaxSpecializedColumns;
  return c;
}

CompileOptions withoutTuning(CompileOptions o) {
  o.tune_on_first_call = false;
  return o;
}

} // namespace

std::vector<TuneCandidate> tuneCandidates(const Program &program, TuneShape shape,
                                          const CompileOptions &options) {
  int maxW = tuning::maxLanes(options);
  std::shared_ptr<Kernel::Impl> base = compileImpl(program, withoutTuning(options));
  std::vector<TuneCandidate> all{untunedOf(*base, shape, maxW)};
  auto add = [&](TuneCandidate c) {
    if (std::find(all.begin(), all.end(), c) == all.end())
      all.push_back(c);
  };
  for (int w : {16, 8, 4}) {
    if (w > maxW || (options.lanes && w != options.lanes))
      continue;
    if (options.rows_across_lanes && shape.cols <= base->code->rows_size_max_cols)
      add({w, true, false});
    if (options.specialize_columns && shape.cols <= cache::kMaxSpecializedColumns)
      add({w, false, true});
    add({w, false, false});
  }
  return all;
}

TuneResult tune(const Program &program, TuneShape shape, const CompileOptions &options,
                const TuneSettings &settings) {
  Clock::time_point start = Clock::now();
  launch::checkThreadCount(settings.threads, "tune: threads");
  if (shape.rows < 1 || shape.cols < 1)
    throw Error(Error::Kind::Bind,
                "tune: shape " + shape.str() + ": rows and columns must be >= 1");
  int maxW = tuning::maxLanes(options);
  std::vector<TuneCandidate> candidates = tuneCandidates(program, shape, options);
  TuneResult result;
  result.program = program.name;
  result.shape = shape;
  result.threads = settings.threads;
  result.budget_ms = settings.budget_ms;
  for (const TuneCandidate &c : candidates)
    result.measured.push_back({c, 0, 0, result.measured.empty()});

  // The untuned kernel's outputs, through bind(): it checks the shape
  // (an odd C for a C/2 slice is an error here, with its message).
  check::Case data = check::makeCase(program, {shape.rows, shape.cols});
  std::shared_ptr<Kernel::Impl> untuned = compileImpl(program, withoutTuning(options));
  untuned->use_tuned = false;
  Kernel(untuned).bind(data.inputRefs(), data.outputRefs())();
  std::vector<std::vector<float>> reference;
  for (const check::GuardedBuffer &b : data.outputs)
    reference.emplace_back(b.data(), b.data() + b.elements());

  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  for (const check::GuardedBuffer &b : data.inputs) {
    buffers.push_back(const_cast<float *>(b.data()));
    strides.push_back(b.rowStride());
  }
  for (check::GuardedBuffer &b : data.outputs) {
    buffers.push_back(b.data());
    strides.push_back(b.rowStride());
  }
  std::vector<float> workspaceStorage;
  LaunchArgs args{buffers.data(), strides.data(), shape.rows, shape.cols, nullptr};
  // One call as Kernel::runEntry makes it, with this contender's entry.
  auto call = [&](const Contender &k) {
    int64_t ws = lower::workspaceFloats(k.impl->code->workspace, shape.cols);
    args.workspace = ws ? launch::alignedWorkspace(workspaceStorage, ws) : nullptr;
    int64_t block = k.impl->options.block_rows;
    if (settings.threads <= 1) {
      for (int64_t r = 0; r < shape.rows; r += block)
        k.entry(&args, r, std::min(shape.rows, r + block));
      return;
    }
    launch::launchRows(k.entry, k.impl.get(), args, ws, block, settings.threads,
                        k.impl->code->row_cost);
  };
  auto sameBits = [&] {
    for (size_t o = 0; o < reference.size(); ++o)
      if (!reference[o].empty() &&
          std::memcmp(reference[o].data(), data.outputs[o].data(), reference[o].size() * 4))
        return false;
    return true;
  };

  // Compile (the untuned configuration always, the others while the
  // budget lasts) and check each candidate's bits.
  std::vector<Contender> contenders;
  double longestCompileMs = 0; // a compile starts only when one as long fits
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0 && msSince(start) + longestCompileMs >= settings.budget_ms) {
      result.notes.push_back("budget spent after compiling " + std::to_string(i) + " of " +
                             std::to_string(candidates.size()) + " candidates");
      break;
    }
    Clock::time_point compileStart = Clock::now();
    Contender k;
    k.index = i;
    k.impl = tuning::pinnedImpl(program, options, candidates[i], maxW);
    k.entry = ownEntry(*k.impl, shape.rows, shape.cols, cache::BuildWhen::Now);
    longestCompileMs = std::max(longestCompileMs, msSince(compileStart));
    for (check::GuardedBuffer &b : data.outputs)
      b.fill(std::numeric_limits<float>::quiet_NaN());
    call(k);
    if (!sameBits()) { // a lanejit bug: never choose it
      result.notes.push_back(candidates[i].name() +
                             ": outputs differ from the untuned kernel's; not a candidate");
      continue;
    }
    contenders.push_back(std::move(k));
  }

  // Warm-up and calibration: repetitions double until a visit lasts long
  // enough to time.
  double left = std::max(0.0, settings.budget_ms - msSince(start));
  double visitMs = std::clamp(left / (double(contenders.size()) * 8), kMinVisitMs, kMaxVisitMs);
  auto visit = [&](Contender &k) {
    Clock::time_point t0 = Clock::now();
    for (int64_t r = 0; r < k.reps; ++r)
      call(k);
    return msSince(t0);
  };
  for (Contender &k : contenders)
    while (visit(k) < visitMs && k.reps < (int64_t{1} << 24))
      k.reps *= 2;

  // Paired, interleaved rounds: every round visits every contender, the
  // first one rotating and the direction alternating, so none is always
  // first or last. At least one round, whatever the budget.
  // A round starts only when it should end within the budget.
  size_t n = contenders.size();
  double roundMs = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (round > 0 && msSince(start) + roundMs > settings.budget_ms)
      break;
    Clock::time_point roundStart = Clock::now();
    for (size_t v = 0; v < n; ++v) {
      size_t at = (round % 2 ? n - 1 - v : v + size_t(round)) % n;
      Contender &k = contenders[at];
      k.ns.push_back(visit(k) * 1e6 / double(k.reps));
    }
    roundMs = msSince(roundStart);
  }
  for (const Contender &k : contenders) {
    TuneResult::Measured &m = result.measured[k.index];
    m.median_ns = median(k.ns);
    m.samples = static_cast<int>(k.ns.size());
  }
  // The untuned configuration stays unless another is faster by a margin
  // that a few noisy samples do not produce.
  double untunedNs = result.measured[0].median_ns, best = untunedNs;
  for (const Contender &k : contenders)
    if (double ns = result.measured[k.index].median_ns; ns < best && ns < kMinGain * untunedNs) {
      best = ns;
      result.chosen = k.index;
    }

  tuning::TuneIdentity id = tuning::tuneIdentity(options);
  tuning::TuneRecordFile record{program.name,
                                 id.build,
                                 id.cpu,
                                 id.features,
                                 shape,
                                 settings.threads,
                                 candidates[result.chosen],
                                 best,
                                 result.measured[0].median_ns};
  std::string path = tuning::tuneRecordPath(program, withoutTuning(options), shape);
  if (!settings.store)
    result.notes.push_back("not recorded (store off)");
  else if (path.empty())
    result.notes.push_back("not recorded: the persistent cache is off (LANEJIT_CACHE)");
  else if (tuning::writeTuneRecord(path, record))
    result.record_path = path;
  else
    result.notes.push_back("could not write " + path);
  result.spent_ms = msSince(start);
  return result;
}

CompileReport::MappingCost estimateMappingCost(const Kernel &kernel, int64_t cols) {
  Lowered l = lowerProgram(kernel.program(), kernel.options());
  lower::MappingCosts e = lower::estimateMappingCosts(l.plan, cols);
  return {cols, e.packet_local, e.rows_across_lanes};
}

namespace tuning {

std::optional<TuneCandidate> tuneChoice(const Program &program, TuneShape shape,
                                        const CompileOptions &options) {
  try {
    TuneResult r = tune(program, shape, options);
    return r.measured[r.chosen].candidate;
  } catch (const Error &) {
    return std::nullopt;
  }
}

} // namespace tuning
} // namespace lanejit
