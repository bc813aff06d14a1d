// `lanejit dump`, `lanejit explain`, and program loading shared by the
// subcommands.
#include "commands.h"

#include <lanejit/error.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>
#include <lanejit/tune.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace lanejit::cli {

Program loadProgram(const std::string &spec) {
  if (spec.starts_with("lib:"))
    return library::byName(spec.substr(4));
  return parseFile(spec);
}

void dumpCommand(const std::string &spec, const std::string &stage, const CompileOptions &options,
                 int64_t cols, bool rowsAcrossLanes) {
  if (rowsAcrossLanes && cols < 1)
    throw Error(Error::Kind::Bind, "dump: --rows-across-lanes needs --cols");
  Program program = loadProgram(spec);
  // The text stage needs no compilation, so it works for any parsed program.
  if (stage == "text") {
    fmt::print("{}", print(program));
    return;
  }
  Kernel kernel = compile(program, options);
  // "object": the bytes the JIT linked, disassembled (not a recompilation).
  if (stage == "object") {
    fmt::print("{}", inspect::disassemble(kernel.object()));
    return;
  }
  if (rowsAcrossLanes)
    fmt::print("{}", kernel.dumpRowsAcrossLanes(stage, cols));
  else
    fmt::print("{}", cols > 0 ? kernel.dump(stage, cols) : kernel.dump(stage));
}

void explainCommand(const std::string &spec, bool json, const CompileOptions &options,
                    const std::string &shapeText) {
  Program program = loadProgram(spec);
  Kernel kernel = compile(program, options);
  if (shapeText.empty()) {
    fmt::print("{}", json ? kernel.report().json() : kernel.report().text());
    return;
  }
  TuneShape shape = TuneShape::parse(shapeText);
  // The report with this C's estimates added, and what a call of this
  // shape would run.
  CompileReport report = kernel.report();
  std::vector<CompileReport::MappingCost> &costs = report.mapping.costs;
  if (std::none_of(costs.begin(), costs.end(), [&](const auto &c) { return c.cols == shape.cols; }))
    costs.push_back(estimateMappingCost(kernel, shape.cols));
  TunedRecord tuned = findTuned(program, shape, options);
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(report.json());
    j["tuned"] = {{"shape", shape.str()},
                  {"found", tuned.found},
                  {"applies", tuned.applies},
                  {"choice", tuned.applies ? tuned.choice.name() : ""},
                  {"message", tuned.message}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}", report.text());
  fmt::print("shape {}: {}\n", shape.str(), tuned.message);
}

} // namespace lanejit::cli
