#include "passes/pipeline.h"

#include "passes/eliminate_common_subexpressions.h"
#include "passes/eliminate_slices.h"
#include "passes/pass.h"

#include <lanejit/text.h>
#include <lanejit/verify.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace lanejit::passes {
namespace {

// The order: slices first (it creates loads CSE can merge), then CSE.
const Pass kPasses[] = {
    {"eliminate-slices", "push column slices into loads and column indices", eliminateSlices},
    {"cse", "merge structurally equal nodes", eliminateCommonSubexpressions},
};

bool disabled(const CompileOptions &options, const char *name) {
  return std::find(options.disabled_passes.begin(), options.disabled_passes.end(), name) !=
         options.disabled_passes.end();
}

} // namespace

Program runPipeline(const Program &input, const CompileOptions &options,
                    std::vector<PassRecord> *records) {
  Program program = input;
  // Printed text tells whether a pass changed anything: the structural hash
  // ignores sharing, so it cannot see what CSE did.
  std::string text = print(program);
  for (const Pass &pass : kPasses) {
    PassRecord record{pass.name};
    if (!disabled(options, pass.name)) {
      auto start = std::chrono::steady_clock::now();
      Program next = pass.run(program);
      record.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count();
      record.ran = true;
      verifyOrThrow(next);
      std::string nextText = print(next);
      record.changed = nextText != text;
      if (record.changed)
        record.ir = nextText;
      program = std::move(next);
      text = std::move(nextText);
      if (options.dump_passes && record.changed)
        std::fprintf(stderr, "; --- IR after %s ---\n%s", pass.name, text.c_str());
    }
    if (options.time_passes)
      std::fprintf(stderr, "; pass %-20s %s %.3f ms\n", pass.name,
                   record.ran ? (record.changed ? "changed" : "no-op  ") : "off    ", record.ms);
    if (records)
      records->push_back(record);
  }
  return program;
}

std::vector<std::pair<std::string, std::string>> passList() {
  std::vector<std::pair<std::string, std::string>> list;
  for (const Pass &pass : kPasses)
    list.emplace_back(pass.name, pass.summary);
  return list;
}

} // namespace lanejit::passes
