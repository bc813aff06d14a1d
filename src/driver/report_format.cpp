// CompileReport as text (for people) and JSON (for the benchmark).
#include <lanejit/report.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lanejit {

int CompileReport::reductions() const {
  int n = 0;
  for (const Traversal &t : traversals)
    n += t.reductions;
  return n;
}

std::string CompileReport::text() const {
  std::string out = fmt::format("kernel {}: {} mapping, W = {} (local lanes {}), blocks of {} "
                                "rows, {} accumulators per reduction, for {}, {}\n",
                                program, mapping.kind, mapping.lanes, mapping.local_lanes,
                                mapping.block_rows, mapping.accumulators, cpu,
                                cache_hit ? std::string("from the kernel cache")
                                          : fmt::format("compiled in {:.1f} ms", compile_ms));
  if (mapping.rows_across_lanes_max_cols > 0)
    out += fmt::format("mapping by C: rows across lanes (blocks of {} rows in row-major packets, "
                       "the next power of two >= C lanes per row; one row per lane for programs "
                       "that slice) for C <= {} and R >= W, {} otherwise — {}\n",
                       mapping.lanes, mapping.rows_across_lanes_max_cols, mapping.kind,
                       mapping.rows_across_lanes_reason);
  else
    out += fmt::format("mapping by C: {} for every C — rows across lanes not used: {}\n",
                       mapping.kind, mapping.rows_across_lanes_reason);
  if (!mapping.costs.empty()) {
    out += "estimated instructions per row, packet-local / rows across lanes:";
    for (const MappingCost &c : mapping.costs)
      out += fmt::format(" C={} {:.0f}/{:.0f}", c.cols, c.packet_local, c.rows_across_lanes);
    out += "\n";
  }
  out += "passes:\n";
  for (const Pass &p : passes)
    out += fmt::format("  {:<24} {:<5} {:<7} {:>7.3f} ms  {}\n", p.name, p.stage,
                       p.ran ? (p.changed ? "changed" : "no-op") : "off", p.ms, p.what);
  out += "traversals (per row, in order):\n";
  for (size_t i = 0; i < traversals.size(); ++i) {
    const Traversal &t = traversals[i];
    out +=
        fmt::format("  {}: len {}{}, depth {}, {} ops, {} materialized, {} reductions, {} "
                    "writes, full packets {}, bodies {}\n",
                    i, t.len, t.bounded ? " (bounded per row)" : "", t.depth, t.operations,
                    t.materializations, t.reductions, t.writes,
                    t.dense_full_packets ? "dense" : "masked", t.inlined ? "inlined" : "helpers");
  }
  out += "aliasing (input / output):\n";
  for (const Alias &a : alias)
    out += fmt::format("  {} / {}: {} — {}\n", a.input, a.output, a.handling, a.reason);
  out += fmt::format(
      "counts:\n"
      "  fused regions {}, materialized buffers {}, staging buffers {}\n"
      "  loads {} (masked {}, workspace {}), stores {} (masked {}, workspace {})\n"
      "  specialized bodies {}, masked bodies {}, inlined bodies {}, helpers {} ({} calls)\n"
      "  alias guards emitted {}, hoisted {}, proved unnecessary {}\n"
      "  inline math expansions {}\n",
      fused_regions, materialized_buffers, staging_buffers, loads, masked_loads, workspace_loads,
      stores, masked_stores, workspace_stores, specialized_bodies, masked_bodies, inlined_bodies,
      helper_functions, helper_calls, guards_emitted, guards_hoisted, guards_proved_unnecessary,
      math_expansions);
  return out;
}

namespace {

using Count = int CompileReport::*;
// The counts, in report order; json() and number() both read this table.
const std::pair<const char *, Count> kCounts[] = {
    {"fused_regions", &CompileReport::fused_regions},
    {"materialized_buffers", &CompileReport::materialized_buffers},
    {"staging_buffers", &CompileReport::staging_buffers},
    {"loads", &CompileReport::loads},
    {"stores", &CompileReport::stores},
    {"masked_loads", &CompileReport::masked_loads},
    {"masked_stores", &CompileReport::masked_stores},
    {"workspace_loads", &CompileReport::workspace_loads},
    {"workspace_stores", &CompileReport::workspace_stores},
    {"specialized_bodies", &CompileReport::specialized_bodies},
    {"masked_bodies", &CompileReport::masked_bodies},
    {"inlined_bodies", &CompileReport::inlined_bodies},
    {"helper_functions", &CompileReport::helper_functions},
    {"helper_calls", &CompileReport::helper_calls},
    {"guards_emitted", &CompileReport::guards_emitted},
    {"guards_hoisted", &CompileReport::guards_hoisted},
    {"guards_proved_unnecessary", &CompileReport::guards_proved_unnecessary},
    {"math_expansions", &CompileReport::math_expansions},
};

} // namespace

std::optional<int64_t> CompileReport::number(const std::string &name) const {
  if (name == "lanes")
    return mapping.lanes;
  if (name == "local_lanes")
    return mapping.local_lanes;
  if (name == "block_rows")
    return mapping.block_rows;
  if (name == "accumulators")
    return mapping.accumulators;
  if (name == "traversals")
    return static_cast<int64_t>(traversals.size());
  if (name == "bounded_traversals") {
    int64_t n = 0;
    for (const Traversal &t : traversals)
      n += t.bounded;
    return n;
  }
  for (const auto &[key, field] : kCounts)
    if (name == key)
      return this->*field;
  return std::nullopt;
}

std::vector<std::string> CompileReport::numberNames() {
  std::vector<std::string> names = {"lanes",        "local_lanes", "block_rows",
                                    "accumulators", "traversals",  "bounded_traversals"};
  for (const auto &[key, field] : kCounts)
    names.push_back(key);
  return names;
}

std::string CompileReport::json() const {
  nlohmann::ordered_json j;
  j["program"] = program;
  j["mapping"] = {{"kind", mapping.kind},
                  {"lanes", mapping.lanes},
                  {"local_lanes", mapping.local_lanes},
                  {"block_rows", mapping.block_rows},
                  {"accumulators", mapping.accumulators},
                  {"rows_across_lanes_max_cols", mapping.rows_across_lanes_max_cols},
                  {"rows_across_lanes_reason", mapping.rows_across_lanes_reason},
                  {"costs", nlohmann::ordered_json::array()}};
  for (const MappingCost &c : mapping.costs)
    j["mapping"]["costs"].push_back({{"cols", c.cols},
                                     {"packet_local", c.packet_local},
                                     {"rows_across_lanes", c.rows_across_lanes}});
  j["passes"] = nlohmann::ordered_json::array();
  for (const Pass &p : passes)
    j["passes"].push_back({{"name", p.name},
                           {"stage", p.stage},
                           {"ran", p.ran},
                           {"changed", p.changed},
                           {"ms", p.ms},
                           {"what", p.what}});
  j["traversals"] = nlohmann::ordered_json::array();
  for (const Traversal &t : traversals)
    j["traversals"].push_back({{"len", t.len},
                               {"depth", t.depth},
                               {"operations", t.operations},
                               {"materializations", t.materializations},
                               {"reductions", t.reductions},
                               {"writes", t.writes},
                               {"dense_full_packets", t.dense_full_packets},
                               {"inlined", t.inlined},
                               {"bounded", t.bounded}});
  j["alias"] = nlohmann::ordered_json::array();
  for (const Alias &a : alias)
    j["alias"].push_back(
        {{"input", a.input}, {"output", a.output}, {"handling", a.handling}, {"reason", a.reason}});
  nlohmann::ordered_json counts;
  for (const auto &[key, field] : kCounts)
    counts[key] = this->*field;
  j["counts"] = counts;
  j["target"] = {{"cpu", cpu}, {"features", features}};
  j["compile_ms"] = compile_ms;
  j["cache_hit"] = cache_hit;
  return j.dump(2) + "\n";
}

} // namespace lanejit
