// bench/case_runner.h — one case, start to finish: buffers and oracle, the
// variants bound, every round visited and checked, the bundle's program,
// input and output files written, the summary, the roofline and the floor.
#pragma once

#include "cases.h"
#include "peers/peer.h"
#include "protocol.h"
#include "records.h"
#include "variants.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lanejit::bench {

struct VisitProgress {
  const std::string &variant;
  int round, rounds;               // 1-based round
  int visits_done, visits_in_case; // visits of this case finished so far
};

struct CaseContext {
  ProtocolSettings protocol;
  std::vector<LanejitConfig> configs;
  const std::vector<std::unique_ptr<Peer>> *peers = nullptr;
  std::vector<std::string> only; // variant names to keep; empty = all
  std::filesystem::path bundle_dir;
  double bandwidth_budget_s = 0.2;
  // Single steps the floor's compute part may take per case (bench/floor.h);
  // 0 leaves the compute part out.
  int64_t floor_steps = 300'000;
  std::function<void(const VisitProgress &)> progress; // before each visit
};

CaseRecord runCase(const CaseSpec &spec, const CaseContext &context);

// time_s and ratios from the rounds (each lanejit variant against every
// variant after it). Rounds whose values are not finite are left out.
void summarize(CaseRecord &record);

} // namespace lanejit::bench
