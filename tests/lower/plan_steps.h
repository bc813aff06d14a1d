// Before -> one lowering pass -> Expected, in the plan's text form
// (lower::describePlan, what `lanejit dump --stage passes` prints): the
// program is parsed from text, lowered by the pipeline up to the pass, and
// the pass is applied alone (traversal order restored, plan verified).
// The golden cases are data, tests/lower/cases/ (run by plan_cases_test.cpp);
// the tests here check what is not one plan's text.
#pragma once

#include "lower/plan.h"
#include "driver/pipeline.h"

#include "io/read_file.h"

#include <lanejit/text.h>

#include <filesystem>
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

#ifdef LANEJIT_SOURCE_DIR // set by tests/CMakeLists.txt for the tests that read the cases
// tests/lower/cases/: the case files and programs/, the programs that cases
// and tests here share.
inline std::filesystem::path planCasesDir() {
  return std::filesystem::path(LANEJIT_SOURCE_DIR) / "tests" / "lower" / "cases";
}

// The text of cases/programs/<name>.lj.
inline std::string planProgram(const std::string &name) {
  return io::readUserFile((planCasesDir() / "programs" / (name + ".lj")).string());
}
#endif

} // namespace lanejit::test
