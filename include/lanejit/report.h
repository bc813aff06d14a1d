// lanejit/report.h — what the compiler realized for one kernel, in numbers.
//
//   Kernel k = compile(library::rope());
//   std::cout << k.report().text();   // or .json()
//
// Everything here is read from the lowered plan and the emitted code, not
// from the options: a switch that did not take effect shows as such. The
// benchmark checks each variant's claims against these counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lanejit {

struct CompileReport {
  // Estimated machine instructions per row of each mapping at `cols`
  // columns, from the plan (lower/choose_mapping.h: opCost weights); what
  // the mapping rule weighs, not a measurement.
  struct MappingCost {
    int64_t cols = 0;
    double packet_local = 0, rows_across_lanes = 0;
  };
  struct Mapping {
    std::string kind = "packet-local"; // one row spread over a packet's lanes
    int lanes = 0;                     // W
    int local_lanes = 0;               // lanes one row occupies per packet
    int block_rows = 0;                // rows per unit of work
    int accumulators = 0;              // independent accumulators per reduction
    // Calls with 1 <= C <= this many columns and R >= W run rows across lanes instead
    // (blocks of W rows: row-major packets of P = the next power of two
    // >= C lanes per row, or one row per lane for programs that slice; same
    // bits); 0: never. The reason names the rule (docs/architecture.md).
    int64_t rows_across_lanes_max_cols = 0;
    std::string rows_across_lanes_reason;
    // The estimates at C = 1, 2, 4, ..., 64 (empty when rows across lanes
    // is off or cannot apply); `lanejit explain --shape` adds its C.
    std::vector<MappingCost> costs;
  };
  struct Pass {
    std::string name, stage; // stage: "ir" or "lower"
    bool ran = false, changed = false;
    double ms = 0;
    std::string what; // what it did (lowering passes)
  };
  struct Traversal {
    std::string len;          // columns per row, in C
    int depth = 0;            // reduction traversals it waits for
    int operations = 0;       // elementwise operations computed per packet
    int materializations = 0; // values it stores to the workspace
    int reductions = 0, writes = 0;
    bool dense_full_packets = false; // full packets use the all-on mask
    bool inlined = true;             // packet bodies inlined (else helpers)
    bool bounded = false;            // stops at a row-uniform column bound
  };
  struct Alias {
    std::string input, output;
    std::string handling; // proved-in-place | guarded-row-staging | staged-by-caller
    std::string reason;
  };

  std::string program;
  Mapping mapping;
  std::vector<Pass> passes;
  std::vector<Traversal> traversals;
  std::vector<Alias> alias;

  // Counts over the whole kernel.
  int fused_regions = 0;        // traversals computing >= 2 operations/outputs in one pass
  int materialized_buffers = 0; // workspace slots holding intermediate values
  int staging_buffers = 0;      // workspace slots for guarded input rows
  int loads = 0, stores = 0;    // vector memory ops emitted (all bodies)
  int masked_loads = 0, masked_stores = 0; // of those, with a run-time lane mask
  int workspace_loads = 0, workspace_stores = 0;
  int specialized_bodies = 0; // body copies with the constant all-on mask
  int masked_bodies = 0;      // body copies with a run-time mask
  int helper_functions = 0;   // bodies emitted as functions (not inlined)
  int helper_calls = 0;
  int inlined_bodies = 0;            // body copies emitted inline
  int guards_emitted = 0;            // address comparisons
  int guards_hoisted = 0;            // of those, evaluated once per entry call
  int guards_proved_unnecessary = 0; // input/output pairs proved safe in place
  int math_expansions = 0;           // inline exp/log/tanh/sigmoid/rsqrt

  // The target the code was compiled for (not necessarily this machine).
  std::string cpu;      // LLVM CPU name
  std::string features; // LLVM feature string
  // This compile: lowering + LLVM + ORC, or 0 when the kernel came from the
  // cache (cache_hit).
  double compile_ms = 0;
  bool cache_hit = false;
  // Linked from the persistent on-disk cache: LLVM did not run
  // (docs/architecture.md, the persistent cache); compile_ms is then the load and link.
  bool disk_cache_hit = false;

  int reductions() const; // over all traversals

  std::string text() const;
  std::string json() const;
  // A number of the report by its JSON name: a mapping field ("lanes",
  // "accumulators", ...), "traversals", "bounded_traversals", or any of
  // the counts above ("specialized_bodies", "materialized_buffers", ...).
  // The benchmark's claims name these. nullopt for an unknown name.
  std::optional<int64_t> number(const std::string &name) const;
  static std::vector<std::string> numberNames();
};

} // namespace lanejit
