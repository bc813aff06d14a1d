// bench/bundle.h — bundle.json (docs/bench-bundle.md) and the bundle's
// derived files: report.md, chart.svg, and the hash of every file.
#pragma once

#include "records.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace lanejit::bench {

nlohmann::ordered_json bundleJson(const BenchRecord &record);

// Writes report.md and chart.svg, hashes every file under `dir` (the
// programs, inputs and outputs runCase wrote, and those two), then writes
// bundle.json with the hashes in "files".
void writeBundle(const BenchRecord &record, const std::filesystem::path &dir);

} // namespace lanejit::bench
