// Writing the bundle (bench/bundle.h).
#include "bundle.h"

#include "report.h"

#include "io/staged_files.h"
#include "sha256.h"

#include <lanejit/check.h>

#include <algorithm>

namespace lanejit::bench {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

ordered_json environmentJson(const EnvironmentRecord &env) {
  ordered_json j = {{"cpu_model", env.cpu_model},
                    {"cpu_features", env.cpu_features},
                    {"cores", env.cores},
                    {"load_before", env.load_before},
                    {"load_after", env.load_after},
                    {"llvm_version", env.llvm_version},
                    {"git_commit", env.git_commit},
                    {"git_dirty", env.git_dirty},
                    {"compile_options", env.compile_options}};
  if (!env.aten_cpu_capability.empty())
    j["aten_cpu_capability"] = env.aten_cpu_capability;
  ordered_json binaries = ordered_json::array();
  for (const EnvironmentRecord::Binary &b : env.binaries)
    binaries.push_back({{"path", b.path}, {"sha256", b.sha256}});
  j["binaries"] = binaries;
  return j;
}

ordered_json variantJson(const VariantRecord &v) {
  ordered_json j = {{"name", v.name}, {"kind", v.kind}};
  if (v.kind == "lanejit") {
    j["options"] = v.options;
    j["compile_ms"] = v.compile_ms;
  }
  j["description"] = v.description;
  if (v.kind == "lanejit") {
    ordered_json claims = ordered_json::array();
    for (const CheckedClaim &c : v.claims)
      claims.push_back({{"stat", c.claim.stat},
                        {"relation", c.claim.relation},
                        {"value", c.claim.value},
                        {"observed", c.observed}});
    j["claims"] = claims;
  }
  j["output_file"] = v.output_file;
  if (!v.output_files.empty()) {
    ordered_json files = ordered_json::array();
    for (const OutputFileRecord &f : v.output_files)
      files.push_back({{"name", f.name}, {"file", f.file}});
    j["output_files"] = files;
  }
  return j;
}

ordered_json visitJson(const VisitRecord &v) {
  ordered_json checks = {{"oracle_failures", v.checks.oracle_failures},
                         {"oracle_max_abs_error", v.checks.oracle_max_abs_error},
                         {"inputs_unchanged", v.checks.inputs_unchanged},
                         {"guards_intact", v.checks.guards_intact},
                         {"output_sha256", v.checks.output_sha256}};
  if (v.checks.report_matches_claims)
    checks["report_matches_claims"] = *v.checks.report_matches_claims;
  if (v.checks.bits_match_default)
    checks["bits_match_default"] = *v.checks.bits_match_default;
  checks["first_failure"] = v.checks.first_failure;
  return {{"variant", v.variant},        {"reps", v.timing.reps}, {"samples_s", v.timing.samples_s},
          {"value_s", v.timing.value_s}, {"checks", checks},      {"status", v.status}};
}

ordered_json streamJson(const StreamRecord &s) {
  return {{"bytes_per_pass", s.bytes_per_pass}, {"passes", s.passes}, {"seconds", s.seconds}};
}

// summary.floor (docs/bench-bundle.md): both parts with their raw numbers,
// so the audit re-derives the floor and the ratio.
ordered_json floorJson(const FloorRecord &f) {
  ordered_json memory = ordered_json::object();
  if (!f.memory_unavailable.empty())
    memory["unavailable"] = f.memory_unavailable;
  else
    memory = {{"bytes", f.bytes},
              {"copy_bytes_per_s", f.copy_bytes_per_s},
              {"triad_bytes_per_s", f.triad_bytes_per_s},
              {"copy_samples", streamJson(f.copy)},
              {"triad_samples", streamJson(f.triad)},
              {"seconds", f.memory_s}};
  const ComputeFloorRecord &c = f.compute;
  ordered_json compute = ordered_json::object();
  if (!c.unavailable.empty())
    compute["unavailable"] = c.unavailable;
  ordered_json stepped = ordered_json::array();
  for (const SteppedCallRecord &s : c.stepped)
    stepped.push_back({{"cols", s.cols},
                       {"rows", s.rows},
                       {"instructions", s.instructions},
                       {"vector", s.vector}});
  ordered_json clock = ordered_json::array();
  for (const ClockSample &s : c.clock)
    clock.push_back({{"cycles", s.cycles}, {"seconds", s.seconds}});
  if (c.unavailable.empty() || !c.stepped.empty()) {
    compute["method"] = c.method;
    compute["row_group"] = c.row_group;
    compute["target_rows"] = c.target_rows;
    compute["target_cols"] = c.target_cols;
    compute["stepped"] = stepped;
  }
  if (c.unavailable.empty()) {
    compute["instructions_per_call"] = c.instructions;
    compute["vector_per_call"] = c.vector;
    compute["issue_width"] = c.issue_width;
    compute["issue_width_source"] = c.issue_width_source;
    compute["clock_samples"] = clock;
    compute["clock_hz"] = c.clock_hz;
    compute["seconds"] = c.seconds;
  }
  return {{"memory", memory}, {"compute", compute}, {"floor_s", f.floor_s},
          {"bound", f.bound},   {"ratio", f.ratio},     {"cost_s", f.cost_s}};
}

ordered_json summaryJson(const CaseRecord &c) {
  ordered_json times = ordered_json::object();
  for (const auto &[name, time] : c.time_s)
    times[name] = time;
  ordered_json ratios = ordered_json::array();
  for (const RatioRecord &r : c.ratios)
    ratios.push_back({{"numerator", r.numerator},
                      {"denominator", r.denominator},
                      {"median", r.summary.median},
                      {"min", r.summary.min},
                      {"max", r.summary.max},
                      {"wins", r.summary.wins},
                      {"rounds", r.summary.rounds}});
  ordered_json j = {{"time_s", times}, {"ratios", ratios}};
  if (c.compile_times)
    j["compile_ms"] = {{"cold", c.compile_times->cold_ms},
                       {"warm", c.compile_times->warm_ms},
                       {"cached", c.compile_times->cached_ms},
                       {"cached_from_disk", c.compile_times->cached_from_disk}};
  if (c.roofline) {
    j["roofline"] = {{"bytes", c.roofline->bytes},
                     {"copy_bytes_per_s", c.roofline->copy_bytes_per_s},
                     {"triad_bytes_per_s", c.roofline->triad_bytes_per_s},
                     {"min_time_s", c.roofline->min_time_s},
                     {"ratio", c.roofline->ratio}};
    j["roofline"]["copy_samples"] = streamJson(c.roofline->copy);
    j["roofline"]["triad_samples"] = streamJson(c.roofline->triad);
  }
  if (c.floor)
    j["floor"] = floorJson(*c.floor);
  return j;
}

ordered_json caseJson(const CaseRecord &c) {
  ordered_json inputs = ordered_json::array(), variants = ordered_json::array(),
               rounds = ordered_json::array();
  for (const InputRecord &in : c.inputs)
    inputs.push_back({{"name", in.name}, {"file", in.file}});
  for (const VariantRecord &v : c.variants)
    variants.push_back(variantJson(v));
  for (const RoundRecord &round : c.rounds) {
    ordered_json visits = ordered_json::array();
    for (const VisitRecord &v : round.visits)
      visits.push_back(visitJson(v));
    rounds.push_back({{"order", round.order}, {"visits", visits}});
  }
  ordered_json j = {{"id", c.id},
                    {"op", c.op},
                    {"dtype", c.dtype},
                    {"rows", c.rows},
                    {"cols", c.cols},
                    {"program_file", c.program_file},
                    {"inputs", inputs},
                    {"variants", variants},
                    {"rounds", rounds},
                    {"summary", summaryJson(c)}};
  if (!c.machine_code.empty()) {
    ordered_json code = ordered_json::array();
    for (const CodeRecord &r : c.machine_code)
      code.push_back({{"variant", r.variant},
                      {"file", r.file},
                      {"function", r.function},
                      {"bytes", r.bytes},
                      {"instructions", r.instructions},
                      {"stack_frame", r.stack_frame},
                      {"vector_bits", r.vector_bits},
                      {"calls", r.calls},
                      {"innermost_instructions", r.innermost_instructions}});
    j["machine_code"] = code;
  }
  return j;
}

void writeText(const fs::path &path, const std::string &text) {
  io::writeFileAtomically(path.string(), text);
}

} // namespace

ordered_json bundleJson(const BenchRecord &record) {
  const ProtocolSettings &p = record.protocol;
  ordered_json cases = ordered_json::array();
  for (const CaseRecord &c : record.cases)
    cases.push_back(caseJson(c));
  return {{"format", "lanejit-bench/1"},
          {"status", record.passed() ? "pass" : "fail"},
          {"environment", environmentJson(record.environment)},
          {"protocol",
           {{"name", p.name},
            {"warmup_s", p.warmup_s},
            {"target_s", p.target_s},
            {"max_reps", p.max_reps},
            {"samples", p.samples},
            {"atol", check::kTolerance},
            {"rtol", check::kTolerance}}},
          {"cases", cases}};
}

void writeBundle(const BenchRecord &record, const fs::path &dir) {
  writeText(dir / "report.md", reportMarkdown(record));
  writeText(dir / "chart.svg", chartSvg(record));
  ordered_json j = bundleJson(record);
  std::vector<std::string> files;
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file())
      files.push_back(fs::relative(entry.path(), dir).generic_string());
  std::sort(files.begin(), files.end());
  ordered_json hashes = ordered_json::object();
  for (const std::string &file : files)
    if (file != "bundle.json")
      hashes[file] = bench::sha256File((dir / file).string());
  j["files"] = hashes;
  writeText(dir / "bundle.json", j.dump(1) + "\n");
}

} // namespace lanejit::bench
