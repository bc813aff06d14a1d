#include "driver/lowered.h"


#include <lanejit/error.h>
#include <lanejit/verify.h>

#include <atomic>
#include <cctype>

namespace lanejit {
namespace {

void checkOptions(const CompileOptions &o) {
  if (o.lanes != 0 && o.lanes != 4 && o.lanes != 8 && o.lanes != 16)
    throw Error(Error::Kind::Compile,
                "lanes must be 4, 8 or 16 for f32 (or 0 for the widest), not " +
                    std::to_string(o.lanes));
  if (o.block_rows < 1)
    throw Error(Error::Kind::Compile, "block_rows must be at least 1");
  if (o.opt_level < 0 || o.opt_level > 3)
    throw Error(Error::Kind::Compile, "opt_level must be 0-3");
}

} // namespace

Lowered lowerProgram(const Program &program, const CompileOptions &options) {
  backend::Target target =
      backend::resolveTarget(options.target_triple, options.target_cpu, options.target_features);
  checkOptions(options);
  verifyOrThrow(program);
  if (program.inputs.size() + program.outputs.size() > kMaxBuffers)
    throw Error(Error::Kind::Compile, "a program may have at most " + std::to_string(kMaxBuffers) +
                                          " inputs and outputs");
  Lowered l;
  int lanes = options.lanes ? options.lanes : target.max_lanes;
  l.plan = passes::runPipeline(program, options, lanes, &l.passes);
  l.target = std::move(target);
  return l;
}

jit::OptimizerSettings optimizerSettings(const CompileOptions &options) {
  return {options.opt_level, options.lean_llvm_pipeline, options.time_passes};
}

std::string entryName(const Program &program) {
  static std::atomic<uint64_t> counter{0};
  std::string name = "lanejit_";
  for (char c : program.name)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + "_" + std::to_string(counter++);
}

} // namespace lanejit
