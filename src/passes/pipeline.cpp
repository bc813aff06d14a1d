#include "passes/pipeline.h"

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

// Program passes: slices first (it creates loads CSE can merge), then CSE.
const Pass kProgramPasses[] = {
    {"eliminate-slices", "push column slices into loads and column indices", eliminateSlices},
    {"cse", "merge structurally equal nodes", eliminateCommonSubexpressions},
};

struct LoweringPass {
  const char *name;
  const char *summary;
  bool CompileOptions::*enabled; // nullptr: always runs
  const char *option;
  lower::LoweringResult (*run)(lower::KernelPlan &, const CompileOptions &);
};

// Lowering passes, from the unfused plan: the fusions decide what is
// computed where; column bounds need the fused reductions and writes (an
// unfused traversal only materializes); alias proofs need the final order; guard
// placement needs the proofs; inlining needs the final bodies; the tail shape and
// flattening need the final traversals and alias decisions.
const LoweringPass kLoweringPasses[] = {
    {"fuse-pointwise", "compute elementwise chains in their consumer's packet",
     &CompileOptions::fuse_pointwise, "fuse_pointwise", lower::fusePointwise},
    {"fuse-reductions", "compute a reduction's operand in the reduction's traversal",
     &CompileOptions::fuse_reductions, "fuse_reductions", lower::fuseReductions},
    {"fuse-outputs", "share one traversal among writes and reductions of equal length",
     &CompileOptions::fuse_outputs, "fuse_outputs", lower::fuseOutputs},
    {"bound-masked-columns", "stop traversals at a row-uniform column predicate",
     &CompileOptions::bound_masked_columns, "bound_masked_columns", lower::boundMaskedColumns},
    {"specialize-full-packets", "full packets run the all-on-mask body",
     &CompileOptions::specialize_full_packets, "specialize_full_packets",
     lower::specializeFullPackets},
    {"prove-in-place", "prove input/output pairs safe when exactly aliased",
     &CompileOptions::prove_in_place, "prove_in_place", lower::proveInPlace},
    {"hoist-guards", "evaluate launch-uniform alias guards once per entry call",
     &CompileOptions::hoist_guards, "hoist_guards", lower::hoistGuards},
    {"choose-inlining", "inline packet bodies or call helpers (cost rule or forced)", nullptr,
     "inline_packet_bodies", lower::chooseInlining},
    {"branchless-tail", "reduction tails join their accumulator by lane masks",
     &CompileOptions::branchless_tail, "branchless_tail", lower::branchlessTail},
    {"flatten-rows", "all-elementwise programs run dense rows as one long row",
     &CompileOptions::flatten_rows, "flatten_rows", lower::flattenRows},
    {"fill-stores", "fills past a column bound are vector stores, not memset calls",
     &CompileOptions::fill_stores, "fill_stores", lower::fillStores},
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
  for (const std::string &name : options.disabled_passes) {
    bool known = false;
    std::string names;
    for (const Pass &pass : kProgramPasses) {
      known = known || name == pass.name;
      names += std::string(names.empty() ? "" : ", ") + pass.name;
    }
    if (!known)
      throw Error(Error::Kind::Compile,
                  "disabled_passes: no program pass '" + name + "' (program passes: " + names +
                      "; lowering passes are turned off by their switch, docs/switches.md)");
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
    if (!pass.enabled || options.*pass.enabled) {
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
    list.push_back({pass.name, "ir", pass.summary, "disabled_passes"});
  for (const LoweringPass &pass : kLoweringPasses)
    list.push_back({pass.name, "lower", pass.summary, pass.option});
  return list;
}

} // namespace lanejit::passes
