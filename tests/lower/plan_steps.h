// Before -> one lowering pass -> Expected, in the plan's text form
// (lower::describePlan, what `lanejit dump --stage passes` prints): the
// program is parsed from text, lowered by the pipeline up to the pass, and
// the pass is applied alone (traversal order restored, plan verified).
#pragma once

#include "lower/plan.h"
#include "driver/pipeline.h"

#include <lanejit/text.h>

#include <string>

namespace lanejit::test {

struct PlanStep {
  std::string before; // the plan the pipeline hands to the pass
  std::string after;  // the plan after it
  std::string what;   // the pass's one-line account
};

inline PlanStep lowerOnePass(const std::string &programText, const std::string &pass,
                             const CompileOptions &options = {}, int lanes = 16) {
  Program program = parse(programText, "test");
  lower::KernelPlan plan = passes::planBeforePass(program, pass, options, lanes);
  PlanStep step;
  step.before = lower::describePlan(plan);
  step.what = passes::runLoweringPass(pass, plan, options).what;
  step.after = lower::describePlan(plan);
  return step;
}

} // namespace lanejit::test
