// What the machine we compile for can do.
//
// LLVM calls the CPUs of these machines "unknown", which would give us
// baseline x86-64 code; so features are detected (llvm::sys host feature
// query, which reads CPUID and the OS's saved-register state) and passed to
// LLVM explicitly, with a CPU model name that implies no more than that.
// On an AArch64 machine the host is LLVM's name for its CPU. A target of
// the other architecture (CompileOptions::target_triple) is compiled, not run.
// A named CPU (CompileOptions::target_cpu) replaces the host altogether:
// its features are LLVM's table for it and its tuning is its own, so code
// compiled for it is the same on every machine.
#pragma once

#include <string>
#include <vector>

namespace lanejit::jit {

struct HostTarget {
  std::string triple;   // LLVM's normalised form: x86_64-pc-linux-gnu, aarch64-unknown-linux-gnu
  std::string cpu;      // LLVM CPU name used for scheduling
  std::string features; // "+avx2,+fma,..." as LLVM spells them
  bool avx512f = false;
  bool avx = false;
  bool fma = false;
  bool aarch64 = false; // NEON: 128-bit vectors, FMA always
  // The default W: the widest register on x86; on AArch64 two 128-bit
  // registers, the seed's W8.
  int maxLanes() const { return aarch64 ? 8 : avx512f ? 16 : avx ? 8 : 4; }
};

// The host, optionally with features overridden ("+a,-b" applied on top).
const HostTarget &hostTarget();
HostTarget targetWithFeatures(const std::string &overrides);
// The target CompileOptions name: `cpu` empty is the host (with
// `overrides`, as targetWithFeatures); else that LLVM x86-64 CPU with its own
// features and `overrides` on top. Throws Error(Kind::Compile) for a CPU
// name LLVM does not know.
HostTarget targetFor(const std::string &cpu, const std::string &overrides);
// The same for a triple: empty, or one of the host's architecture, is the
// above; an aarch64 triple ("aarch64-linux-gnu") is that architecture with
// `cpu` an LLVM AArch64 CPU name ("apple-m1", "neoverse-v1"; empty is
// "generic") and its features, `overrides` on top. Throws
// Error(Kind::Compile) for another architecture or an unknown CPU.
HostTarget targetFor(const std::string &triple, const std::string &cpu,
                     const std::string &overrides);
// Whether a target of `triple` (HostTarget::triple) runs on this machine's
// architecture.
bool runsOnHostArchitecture(const std::string &triple);

// The features a target's list ("+a,-b,...") turns on that this machine
// lacks: code compiled for it would fault here with an illegal instruction.
// Only features the host query reports on count (LLVM names a few that are
// not CPUID bits).
std::vector<std::string> featuresMissingOnHost(const std::string &features);

} // namespace lanejit::jit
