// McaModel: llvm-mca's estimate of a loop body's cycles per iteration, from
// LLVM's MCA library (the engine of the llvm-mca tool) for one CPU's
// scheduling model.
//
// The body is the loop's instructions in address order, run back to back
// for kIterations iterations as llvm-mca runs its input: the estimate is
// llvm-mca's "Total Cycles" over the iterations, with no branch
// mispredictions, cache misses or aliasing (loads and stores assumed
// independent, llvm-mca's -noalias). It is a static proxy for speed, for
// code no machine here can time (AArch64), not a measurement.
#pragma once

#include "inspect/disassembler.h"
#include "inspect/object_reader.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lanejit::inspect {

class McaModel {
public:
  static constexpr unsigned kIterations = 100; // llvm-mca's default

  // `cpu` "" is the architecture's generic model. Throws Error(Kind::Io)
  // when LLVM does not know the target or the CPU.
  McaModel(const std::string &triple, const std::string &cpu, const std::string &features);
  ~McaModel();

  // The instructions of `fn` at `body` (indices into fn.instructions);
  // nothing, with the reason in `problem`, when the model cannot schedule
  // one of them (no scheduling information for it on this CPU) or one is a
  // call (llvm-mca would charge it a made-up 100 cycles).
  std::optional<double> cyclesPerIteration(const DecodedFunction &fn,
                                           const std::vector<size_t> &body,
                                           std::string *problem) const;

  const std::string &cpu() const { return cpu_; }

private:
  std::string cpu_;
  Disassembler decode_; // decodes every extension; the model schedules
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget_;
};

} // namespace lanejit::inspect
