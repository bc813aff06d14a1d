#include "driver/pipeline.h"

#include "lower/lowering_passes.h"
#include "lower/verify_plan.h"
#include "passes/eliminate_common_subexpressions.h"
#include "passes/eliminate_slices.h"
#include "passes/pass.h"

#include <lanejit/error.h>
#include <lanejit/text.h>
#include <lanejit/verify.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace lanejit::passes {
namespace {

// Pass order and switches: src/options/switches.def.
const Pass kProgramPasses[] = {
#define LANEJIT_IR_PASS(name, function, summary) {name, summary, function},
#include "options/switches.def"
};

struct LoweringPass {
  const char *name;
  const char *summary;
  bool (*enabled)(const CompileOptions &); // its switch
  const char *option;                      // the switch's CompileOptions field
  lower::LoweringResult (*run)(lower::KernelPlan &, const CompileOptions &);
};

// A bool field is a pass's switch; the inlining policy is choose-inlining's
// input, not an off switch.
bool switchOn(const CompileOptions &options, bool CompileOptions::*field) {
  return options.*field;
}
bool switchOn(const CompileOptions &, CompileOptions::Inline CompileOptions::*) {
  return true;
}

const LoweringPass kLoweringPasses[] = {
#define LANEJIT_LOWERING_PASS(name, field, summary, call)                                          \
  {name, summary,                                                                                  \
   [](const CompileOptions &options) { return switchOn(options, &CompileOptions::field); },        \
   #field,                                                                                         \
   [](lower::KernelPlan &plan, [[maybe_unused]] const CompileOptions &options) { return call; }},
#include "options/switches.def"
};

bool disabled(const CompileOptions &options, const char *name) {
  return std::find(options.disabled_passes.begin(), options.disabled_passes.end(), name) !=
         options.disabled_passes.end();
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void report(const CompileOptions &options, PassRecord record, std::vector<PassRecord> *records) {
  if (options.dump_passes && record.changed)
    std::fprintf(stderr, "; --- %s after %s ---\n%s", record.stage == "ir" ? "IR" : "plan",
                 record.name.c_str(), record.after.c_str());
  if (options.time_passes)
    std::fprintf(stderr, "; pass %-24s %s %.3f ms\n", record.name.c_str(),
                 record.ran ? (record.changed ? "changed" : "no-op  ") : "off    ", record.ms);
  if (records)
    records->push_back(std::move(record));
}

const LoweringPass &loweringPass(const std::string &name) {
  for (const LoweringPass &pass : kLoweringPasses)
    if (name == pass.name)
      return pass;
  throw Error(Error::Kind::Compile, "no lowering pass '" + name + "'");
}

// One lowering pass as the pipeline runs it: the pass, the traversal order
// restored, the plan verified. `ms` times the pass and the reordering.
lower::LoweringResult applyLoweringPass(const LoweringPass &pass, lower::KernelPlan &plan,
                                        const CompileOptions &options, double *ms = nullptr) {
  auto start = std::chrono::steady_clock::now();
  lower::LoweringResult result = pass.run(plan, options);
  lower::orderTraversals(plan);
  if (ms)
    *ms = msSince(start);
  lower::verifyPlanOrThrow(plan, pass.name);
  return result;
}

// The pipeline up to, not including, lowering pass `stop` (all of it when
// null).
lower::KernelPlan lowerUpTo(const Program &input, const CompileOptions &options, int lanes,
                            std::vector<PassRecord> *records, const LoweringPass *stop) {
  // A misspelt name would silently leave its pass on.
  std::vector<PassInfo> known = passList();
  for (const std::string &name : options.disabled_passes)
    if (std::none_of(known.begin(), known.end(),
                     [&](const PassInfo &pass) { return pass.name == name; })) {
      std::string names;
      for (const PassInfo &pass : known)
        names += (names.empty() ? "" : ", ") + pass.name;
      throw Error(Error::Kind::Compile,
                  "disabled_passes: no pass '" + name + "' (passes: " + names + ")");
    }
  Program program = input;
  // Printed text tells whether a pass changed anything: the structural hash
  // ignores sharing, so it cannot see what CSE did.
  std::string text = print(program);
  for (const Pass &pass : kProgramPasses) {
    PassRecord record{pass.name, "ir"};
    if (!disabled(options, pass.name)) {
      auto start = std::chrono::steady_clock::now();
      Program next = pass.run(program);
      record.ms = msSince(start);
      record.ran = true;
      verifyOrThrow(next);
      std::string nextText = print(next);
      record.changed = nextText != text;
      if (record.changed)
        record.after = nextText;
      program = std::move(next);
      text = std::move(nextText);
    }
    report(options, std::move(record), records);
  }

  // The plan is verified like the IR: after it is built and after every
  // lowering pass (cheap next to LLVM: microseconds on library kernels).
  lower::KernelPlan plan = lower::initialPlan(program, options, lanes);
  lower::verifyPlanOrThrow(plan, "the initial plan");
  std::string described = lower::describePlan(plan);
  for (const LoweringPass &pass : kLoweringPasses) {
    if (&pass == stop)
      break;
    PassRecord record{pass.name, "lower"};
    if (pass.enabled(options) && !disabled(options, pass.name)) {
      lower::LoweringResult result = applyLoweringPass(pass, plan, options, &record.ms);
      record.ran = true;
      record.what = result.what;
      std::string next = lower::describePlan(plan);
      record.changed = next != described;
      if (record.changed)
        record.after = next;
      described = std::move(next);
    }
    report(options, std::move(record), records);
  }
  return plan;
}

} // namespace

lower::KernelPlan runPipeline(const Program &program, const CompileOptions &options, int lanes,
                              std::vector<PassRecord> *records) {
  return lowerUpTo(program, options, lanes, records, nullptr);
}

lower::KernelPlan planBeforePass(const Program &program, const std::string &pass,
                                 const CompileOptions &options, int lanes) {
  return lowerUpTo(program, options, lanes, nullptr, &loweringPass(pass));
}

lower::LoweringResult runLoweringPass(const std::string &pass, lower::KernelPlan &plan,
                                      const CompileOptions &options) {
  return applyLoweringPass(loweringPass(pass), plan, options);
}

std::vector<PassInfo> passList() {
  std::vector<PassInfo> list;
  for (const Pass &pass : kProgramPasses)
    list.push_back({pass.name, "ir", pass.summary, ""});
  for (const LoweringPass &pass : kLoweringPasses)
    list.push_back({pass.name, "lower", pass.summary, pass.option});
  return list;
}

} // namespace lanejit::passes
