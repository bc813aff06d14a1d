// The public entry points of lanejit/inspect.h.
#include <lanejit/inspect.h>

#include "inspect/mca.h"
#include "inspect/metrics.h"
#include "inspect/object_reader.h"
#include "jit/jit.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace lanejit::inspect {
namespace {

// The part the compiler split off `name` and named after it: "name.cold",
// "name._omp_fn.0", "name.constprop.0" ('.' is in no C or C++ name).
bool partOf(const std::string &symbol, const std::string &name) {
  return symbol.size() > name.size() + 1 && symbol.compare(0, name.size(), name) == 0 &&
         symbol[name.size()] == '.';
}

// The functions of `decoded` that `names` selects (all when empty), in
// address order.
std::vector<const DecodedFunction *> select(const DecodedObject &decoded,
                                            const std::vector<std::string> &names) {
  for (const std::string &name : names)
    if (std::find(decoded.defined.begin(), decoded.defined.end(), name) == decoded.defined.end()) {
      constexpr size_t shown = 12;
      std::string defined;
      for (size_t i = 0; i < decoded.defined.size() && i < shown; ++i)
        defined += (i ? ", " : "") + decoded.defined[i];
      if (decoded.defined.size() > shown)
        defined += fmt::format(" and {} more", decoded.defined.size() - shown);
      throw Error(Error::Kind::Bind,
                  fmt::format("no function '{}' in the object; it defines {}", name,
                              defined.empty() ? "none" : defined));
    }
  std::vector<const DecodedFunction *> chosen;
  for (const DecodedFunction &fn : decoded.functions)
    if (names.empty() || std::any_of(names.begin(), names.end(), [&](const std::string &name) {
          return fn.name == name || partOf(fn.name, name);
        }))
      chosen.push_back(&fn);
  return chosen;
}

} // namespace

ObjectReport inspectObject(std::string_view bytes) {
  return inspectObject(bytes, {});
}

// Without a CPU to model, no estimate: a guess at the CPU would pass for
// one (the audit and the bench read objects this way).
ObjectReport inspectObject(std::string_view bytes, const std::vector<std::string> &functions) {
  McaTarget none;
  none.enabled = false;
  return inspectObject(bytes, functions, none);
}

ObjectReport inspectObject(std::string_view bytes, const std::vector<std::string> &functions,
                           const McaTarget &mca) {
  DecodedObject decoded = readObject(bytes);
  ObjectReport report;
  report.format = decoded.format;
  report.kind = decoded.kind;
  report.triple = decoded.triple;
  report.arch = decoded.arch == Arch::AArch64 ? "aarch64" : "x86-64";
  report.undefined = decoded.undefined;
  std::optional<McaModel> model;
  if (mca.enabled) {
    // An unknown CPU costs the estimates, not the report.
    try {
      model.emplace(decoded.triple, mca.cpu, mca.features);
      report.mca_cpu = mca.cpu.empty() ? "generic" : mca.cpu;
    } catch (const Error &e) {
      report.mca_note = e.what();
    }
  }
  std::string problem;
  for (const DecodedFunction *fn : select(decoded, functions))
    report.functions.push_back(measureFunction(*fn, decoded, model ? &*model : nullptr, &problem));
  if (report.mca_note.empty() && !problem.empty())
    report.mca_note = "some loops have no estimate: " + problem;
  return report;
}

ObjectReport inspectKernel(const Kernel &kernel) {
  if (kernel.object().empty())
    throw Error(Error::Kind::Compile, "kernel for '" + kernel.program().name +
                                          "' kept no object (compiled before capture?)");
  McaTarget target;
  target.cpu = kernel.report().cpu;
  target.features = kernel.report().features;
  return inspectObject(kernel.object(), {}, target);
}

std::string disassemble(std::string_view bytes) {
  return disassemble(bytes, {});
}

std::string disassemble(std::string_view bytes, const std::vector<std::string> &functions) {
  DecodedObject decoded = readObject(bytes);
  std::string out;
  for (const DecodedFunction *chosen : select(decoded, functions)) {
    const DecodedFunction &fn = *chosen;
    out += fmt::format("{}:  # {} bytes at {:#x}\n", fn.name, fn.bytes, fn.address);
    for (const DecodedInstruction &inst : fn.instructions) {
      std::string note;
      if (!inst.target.empty())
        note = "  # -> " + inst.target;
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
