// bench/report.h — what a person reads: the markdown table (report.md and
// stdout; format in docs/bench-bundle.md) and the ratio chart (chart.svg).
#pragma once

#include "records.h"

#include <string>

namespace lanejit::bench {

// Case | each variant µs | first variant / each other: median [min–max]
// wins/rounds | roofline | checks. Numbers printed with %.4g.
std::string reportTable(const BenchRecord &record);
// The console's form of the table (the main job's stdout): per case, the
// first variant's time, roofline and checks, then one line per ratio to
// each other variant: median [min–max] wins/rounds. report.md keeps the
// full matrix (reportTable).
std::string consoleTable(const BenchRecord &record);
// The seed's layout for the seed's six cases (RoPE, LayerNorm and SwiGLU at
// both seed shapes) that ran with Inductor: fusion off (lanejit-unfused) and
// on (lanejit) µs, Inductor µs, On/off and On/Inductor ratios, and the
// seed's own published On/Inductor (Apple M1 Max) beside them. A markdown
// table whose headers follow reportTable's, so the audit reads it the same
// way; "" when no such case ran.
std::string seedTable(const BenchRecord &record);
// The cases' machine code side by side (CaseRecord::machine_code): one row
// per function, its case and variant in the first column ("Kernel"): code
// bytes, instructions, stack frame, widest vector, calls, innermost loops'
// instruction counts. "" when no case has any.
std::string machineCodeTable(const BenchRecord &record);
// Each case's floor, part by part (bench/floor.h); "" when no case has one.
std::string floorTable(const BenchRecord &record);
// What the numbers mean: paired ratios, ranges, the protocol.
std::string reportNotes(const BenchRecord &record);
// Title, settings, environment, the table and the notes.
std::string reportMarkdown(const BenchRecord &record);
// Each ratio of the table with its [min–max] range, per case, on a log axis.
std::string chartSvg(const BenchRecord &record);

} // namespace lanejit::bench
