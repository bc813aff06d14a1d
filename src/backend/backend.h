// The backend: from a finished KernelPlan to native code in this process.
// The one place that knows LLVM — module construction, codegen
// (src/codegen), the optimiser and ORC (src/jit) — behind plain types, so
// the runtime drives it without an LLVM or codegen header:
//
//   Target t = backend::resolveTarget(cpu, features);
//   Native n = backend::compile(plan, t.codegen, settings, "lanejit_rope_0");
//   n.entry(&args, 0, rows);
#pragma once

#include "codegen/target.h"
#include "jit/optimizer.h"
#include "lower/plan.h"

#include <lanejit/launch_abi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lanejit::backend {

// The machine code is compiled for: the host, or a named LLVM CPU, with
// feature overrides, on the host's architecture or AArch64
// (CompileOptions::target_triple / target_cpu / target_features).
struct Target {
  codegen::CodegenTarget codegen;
  int max_lanes = 4; // the widest packet its features allow
};
// Throws Error(Kind::Compile) for a triple or CPU name LLVM does not know.
Target resolveTarget(const std::string &triple, const std::string &cpu,
                     const std::string &feature_overrides);
// Why code for `target` cannot run on this machine ("compiled for aarch64
// (apple-m1); this machine is x86_64", or the CPU features it lacks, whose
// instructions would fault here), or "" when it can.
std::string cannotRunHere(const Target &target);

// A kernel linked into the process. The code stays mapped while any copy
// of `lifetime` lives.
struct Native {
  NativeEntry entry = nullptr;
  std::shared_ptr<void> lifetime;
  std::string object; // the relocatable object as linked (inspect, aot)
  std::string symbol; // the entry's name in it
  codegen::CodegenCounts counts;
};

// Emits `plan` as the entry `symbol`, optimises it with `settings` and
// links it; code for another architecture is only compiled (`object` set,
// `entry` null). Throws Error(Kind::Compile) on any LLVM failure. With
// `fixedCols`, the entry is specialised for calls of exactly that many
// columns (codegen::emitKernel).
Native compile(const lower::KernelPlan &plan, const Target &target,
               const jit::OptimizerSettings &settings, const std::string &symbol,
               std::optional<int64_t> fixedCols = std::nullopt);
// The column-split entry of `plan` (codegen::emitPartKernel), linked on
// its own: `part` stays valid while `lifetime` lives.
struct NativePart {
  lower::NativePartEntry part = nullptr;
  std::shared_ptr<void> lifetime;
};
NativePart compilePart(const lower::KernelPlan &plan, const Target &target,
                       const jit::OptimizerSettings &settings, const std::string &symbol);
// The rows-across-lanes entry of `plan` for exactly `cols` columns
// (codegen::emitRowsAcrossLanes), linked on its own; the serial entry's
// signature. `entry` stays valid while `lifetime` lives; `object` is what
// the persistent cache stores (no codegen counts).
Native compileRowsAcrossLanes(const lower::KernelPlan &plan, const Target &target,
                              const jit::OptimizerSettings &settings, const std::string &symbol,
                              int64_t cols);
// Links an object compile() produced earlier (the persistent cache's); the
// counts are the ones compile() reported for it.
Native link(const std::string &object, const std::string &symbol,
            const codegen::CodegenCounts &counts);

// "LLVM 16.0.6": part of the persistent cache's build identity.
std::string version();

// A kernel's entries: the generic one, and those built later from the same
// plan for exactly one C.
enum class EntryKind {
  Generic,         // any C (compile without fixedCols)
  Columns,         // packet-local, specialised for one C (compile with fixedCols)
  RowsAcrossLanes, // one row per lane, for one C (compileRowsAcrossLanes)
};

// The textual stages of an entry, for `lanejit dump`: "llvm-unoptimized",
// "llvm" (after the optimiser) and "asm". `cols`: the C of a Columns or
// RowsAcrossLanes entry.
std::string dump(const lower::KernelPlan &plan, const Target &target,
                 const jit::OptimizerSettings &settings, const std::string &symbol,
                 const std::string &stage, EntryKind kind = EntryKind::Generic, int64_t cols = 0);

} // namespace lanejit::backend
