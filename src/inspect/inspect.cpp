// The public entry points of lanejit/inspect.h.
#include <lanejit/inspect.h>

#include "inspect/metrics.h"
#include "inspect/object_reader.h"
#include "jit/jit.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>

#include <fmt/format.h>

#include <algorithm>

namespace lanejit::inspect {

ObjectReport inspectObject(std::string_view bytes) {
  DecodedObject decoded = readObject(bytes);
  ObjectReport report;
  report.format = decoded.format;
  report.triple = decoded.triple;
  report.undefined = decoded.undefined;
  for (const DecodedFunction &fn : decoded.functions)
    report.functions.push_back(measureFunction(fn, decoded));
  return report;
}

ObjectReport inspectKernel(const Kernel &kernel) {
  if (kernel.object().empty())
    throw Error(Error::Kind::Compile, "kernel for '" + kernel.program().name +
                                          "' kept no object (compiled before capture?)");
  return inspectObject(kernel.object());
}

std::string disassemble(std::string_view bytes) {
  DecodedObject decoded = readObject(bytes);
  std::string out;
  for (const DecodedFunction &fn : decoded.functions) {
    out += fmt::format("{}:  # {} bytes at {:#x}\n", fn.name, fn.bytes, fn.address);
    for (const DecodedInstruction &inst : fn.instructions) {
      std::string note;
      if (!inst.relocation_symbol.empty() && (inst.is_call || inst.is_branch))
        note = "  # -> " + inst.relocation_symbol;
      else if (!inst.relocation_symbol.empty())
        note = "  # reloc " + inst.relocation_symbol;
      else if (inst.branch_target)
        note = fmt::format("  # -> {:x}", *inst.branch_target);
      out += fmt::format("  {:6x}:  {}{}\n", inst.offset, inst.text, note);
    }
  }
  return out;
}

const std::vector<std::string> &allowedImports() {
  // Exactly what the JIT resolves for its kernels (jit::runtimeSymbols).
  static const std::vector<std::string> allowed = [] {
    std::vector<std::string> names;
    for (const jit::RuntimeSymbol &s : jit::runtimeSymbols())
      names.push_back(s.name);
    return names;
  }();
  return allowed;
}

std::vector<std::string> disallowedImports(const ObjectReport &report) {
  std::vector<std::string> bad;
  for (const std::string &name : report.undefined)
    if (std::find(allowedImports().begin(), allowedImports().end(), name) == allowedImports().end())
      bad.push_back(name);
  return bad;
}

} // namespace lanejit::inspect
