// CompileReport as text (for people) and JSON (for the benchmark).
#include <lanejit/report.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lanejit {

std::string CompileReport::text() const {
  std::string out = fmt::format("kernel {}: {} mapping, W = {} (local lanes {}), blocks of {} "
                                "rows, {} accumulators per reduction, compiled in {:.1f} ms\n",
                                program, mapping.kind, mapping.lanes, mapping.local_lanes,
                                mapping.block_rows, mapping.accumulators, compile_ms);
  out += "passes:\n";
  for (const Pass &p : passes)
    out += fmt::format("  {:<24} {:<5} {:<7} {:>7.3f} ms  {}\n", p.name, p.stage,
                       p.ran ? (p.changed ? "changed" : "no-op") : "off", p.ms, p.what);
  out += "traversals (per row, in order):\n";
  for (size_t i = 0; i < traversals.size(); ++i) {
    const Traversal &t = traversals[i];
    out += fmt::format("  {}: len {}{}, depth {}, {} ops, {} materialized, {} reductions, {} "
                       "writes, full packets {}, bodies {}\n",
                       i, t.len, t.bounded ? " (bounded per row)" : "", t.depth, t.operations,
                       t.materializations, t.reductions, t.writes,
                       t.dense_full_packets ? "dense" : "masked",
                       t.inlined ? "inlined" : "helpers");
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

std::string CompileReport::json() const {
  nlohmann::ordered_json j;
  j["program"] = program;
  j["mapping"] = {{"kind", mapping.kind},
                  {"lanes", mapping.lanes},
                  {"local_lanes", mapping.local_lanes},
                  {"block_rows", mapping.block_rows},
                  {"accumulators", mapping.accumulators}};
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
  j["counts"] = {{"fused_regions", fused_regions},
                 {"materialized_buffers", materialized_buffers},
                 {"staging_buffers", staging_buffers},
                 {"loads", loads},
                 {"stores", stores},
                 {"masked_loads", masked_loads},
                 {"masked_stores", masked_stores},
                 {"workspace_loads", workspace_loads},
                 {"workspace_stores", workspace_stores},
                 {"specialized_bodies", specialized_bodies},
                 {"masked_bodies", masked_bodies},
                 {"inlined_bodies", inlined_bodies},
                 {"helper_functions", helper_functions},
                 {"helper_calls", helper_calls},
                 {"guards_emitted", guards_emitted},
                 {"guards_hoisted", guards_hoisted},
                 {"guards_proved_unnecessary", guards_proved_unnecessary},
                 {"math_expansions", math_expansions}};
  j["compile_ms"] = compile_ms;
  return j.dump(2) + "\n";
}

} // namespace lanejit
