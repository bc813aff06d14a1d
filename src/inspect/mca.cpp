#include "inspect/mca.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <llvm/MC/MCInst.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/MCA/Context.h>
#include <llvm/MCA/CustomBehaviour.h>
#include <llvm/MCA/InstrBuilder.h>
#include <llvm/MCA/Pipeline.h>
#include <llvm/MCA/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

namespace lanejit::inspect {

McaModel::McaModel(const std::string &triple, const std::string &cpu,
                   const std::string &features)
    : cpu_(cpu), decode_(llvm::Triple(triple)) {
  std::string problem;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, problem);
  if (!target)
    throw Error(Error::Kind::Io, "llvm-mca: no target for " + triple + ": " + problem);
  subtarget_.reset(target->createMCSubtargetInfo(triple, cpu, features));
  if (!subtarget_)
    throw Error(Error::Kind::Io, "llvm-mca: cannot model " + triple + " CPU " + cpu);
  if (!cpu.empty() && !subtarget_->isCPUStringValid(cpu))
    throw Error(Error::Kind::Io,
                fmt::format("llvm-mca: LLVM knows no CPU '{}' for {}", cpu, triple));
}

McaModel::~McaModel() = default;

std::optional<double> McaModel::cyclesPerIteration(const DecodedFunction &fn,
                                                   const std::vector<size_t> &body,
                                                   std::string *problem) const {
  auto fail = [&](std::string why) -> std::optional<double> {
    if (problem)
      *problem = std::move(why);
    return std::nullopt;
  };
  if (body.empty())
    return fail("empty loop");
  // llvm-mca models a call as 100 cycles (and warns on stderr): no
  // estimate is better than that one.
  for (size_t index : body)
    if (fn.instructions.at(index).is_call)
      return fail(fmt::format("the loop at {:#x} calls a function, which llvm-mca does not model",
                              fn.instructions.at(body.front()).offset));
  const llvm::MCSchedModel &model = subtarget_->getSchedModel();
  if (!model.hasInstrSchedModel())
    return fail(fmt::format("LLVM has no scheduling model for CPU '{}'", cpu_));
  const llvm::MCInstrInfo &info = *decode_.instrInfo;
  const llvm::MCRegisterInfo &registers = *decode_.registers;
  llvm::mca::InstrumentManager instruments(*subtarget_, info);
  llvm::mca::InstrBuilder builder(*subtarget_, info, registers, decode_.analysis.get(),
                                  instruments);
  llvm::ArrayRef<uint8_t> code(reinterpret_cast<const uint8_t *>(fn.code.data()), fn.code.size());
  std::vector<std::unique_ptr<llvm::mca::Instruction>> lowered;
  for (size_t index : body) {
    const DecodedInstruction &d = fn.instructions.at(index);
    llvm::MCInst inst;
    uint64_t size = 0;
    if (d.offset >= code.size() ||
        decode_.decoder->getInstruction(inst, size, code.slice(d.offset), fn.address + d.offset,
                                        llvm::nulls()) != llvm::MCDisassembler::Success)
      return fail(fmt::format("cannot decode the instruction at {:#x}", d.offset));
    auto made = builder.createInstruction(inst, {});
    if (!made) {
      std::string why = llvm::toString(made.takeError());
      return fail(fmt::format("'{}' at {:#x}: {}", d.text, d.offset, why));
    }
    lowered.push_back(std::move(*made));
  }
  llvm::mca::CircularSourceMgr source(lowered, kIterations);
  llvm::mca::CustomBehaviour custom(*subtarget_, source, info);
  llvm::mca::Context context(registers, *subtarget_);
  // As llvm-mca's defaults: widths and queues from the model; loads and
  // stores do not alias (-noalias).
  llvm::mca::PipelineOptions options(0, 0, 0, 0, 0, 0, /*NoAlias=*/true);
  std::unique_ptr<llvm::mca::Pipeline> pipeline =
      context.createDefaultPipeline(options, source, custom);
  llvm::Expected<unsigned> cycles = pipeline->run();
  if (!cycles)
    return fail("llvm-mca: " + llvm::toString(cycles.takeError()));
  return static_cast<double>(*cycles) / kIterations;
}

} // namespace lanejit::inspect
