#include "jit/host_target.h"

#include <lanejit/error.h>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/AArch64TargetParser.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <map>
#include <sstream>

namespace lanejit::jit {
namespace {

using FeatureMap = std::map<std::string, bool>;

bool has(const FeatureMap &features, const char *f) {
  auto it = features.find(f);
  return it != features.end() && it->second;
}

// `cpu` empty: a name for the host that implies no more than `features`.
HostTarget fromFeatureMap(const FeatureMap &features, std::string cpu = "") {
  HostTarget t;
  // LLVM's configured host triple, which getProcessTriple() would only
  // normalise (the same string for a 64-bit x86 process; host_target_test
  // checks) at a first-use cost of ~0.15 ms, a tenth of a cached load.
  t.triple = LLVM_HOST_TRIPLE;
  std::ostringstream list;
  bool first = true;
  for (const auto &[name, on] : features) {
    list << (first ? "" : ",") << (on ? "+" : "-") << name;
    first = false;
  }
  t.features = list.str();
  t.avx512f = has(features, "avx512f");
  t.avx = has(features, "avx");
  t.fma = has(features, "fma");
  if (!cpu.empty()) {
    t.cpu = cpu;
    return t;
  }
  std::string host = llvm::sys::getHostCPUName().str();
  if (host != "generic" && host != "unknown" && !host.empty())
    t.cpu = host;
  else if (t.avx512f && has(features, "avx512bw") && has(features, "avx512dq") &&
           has(features, "avx512vl") && has(features, "avx512cd"))
    t.cpu = "x86-64-v4";
  else if (has(features, "avx2") && t.fma && has(features, "bmi2"))
    t.cpu = "x86-64-v3";
  else
    t.cpu = "x86-64";
  return t;
}

// Read once: each CPUID is a trap to the hypervisor on a virtual machine
// (~1.3 us here, ~20 of them), and every compile asks.
const FeatureMap &hostFeatureMap() {
  static const FeatureMap features = [] {
    llvm::StringMap<bool> raw;
    FeatureMap map;
    if (llvm::sys::getHostCPUFeatures(raw))
      for (const auto &entry : raw)
        map[entry.getKey().str()] = entry.getValue();
    return map;
  }();
  return features;
}

// "+a,-b" over `features`, with what each implies: "-avx512f" also turns
// off avx512vl and every other feature that needs it. Otherwise the list,
// which LLVM reads in order, would say "-avx512f,...,+avx512vl" and the
// later "+avx512vl" would turn avx512f back on.
void applyOverrides(FeatureMap &features, const std::string &overrides) {
  llvm::StringMap<bool> implied;
  std::stringstream in(overrides);
  std::string item;
  while (std::getline(in, item, ','))
    if (item.size() > 1 && (item[0] == '+' || item[0] == '-')) {
      bool on = item[0] == '+';
      features[item.substr(1)] = on;
      implied.clear();
      llvm::X86::updateImpliedFeatures(item.substr(1), on, implied);
      for (const auto &entry : implied)
        features[entry.getKey().str()] = entry.getValue();
    }
}

// An AArch64 CPU's target: its features are LLVM's table of its extensions
// (the architecture version comes with the CPU name inside LLVM); NEON and
// FMA are in every AArch64 CPU.
HostTarget aarch64Target(const llvm::Triple &triple, const std::string &cpu,
                         const std::string &overrides) {
  HostTarget t;
  t.triple = triple.str();
  t.cpu = cpu.empty() ? "generic" : cpu;
  t.aarch64 = true;
  t.fma = true;
  std::string features = "+neon,+fp-armv8";
  if (t.cpu != "generic") {
    const llvm::AArch64::CpuInfo &info = llvm::AArch64::parseCpu(t.cpu);
    if (info.Name == "invalid")
      throw Error(Error::Kind::Compile,
                  "unknown target CPU '" + cpu +
                      "' for aarch64 (an LLVM AArch64 CPU name: generic, apple-m1, "
                      "neoverse-n1, neoverse-v1, cortex-a76, ...)");
    std::vector<llvm::StringRef> own;
    llvm::AArch64::getExtensionFeatures(
        llvm::AArch64::getDefaultExtensions(t.cpu, info.Arch), own);
    for (llvm::StringRef f : own)
      if (f != "+neon" && f != "+fp-armv8")
        features += "," + f.str();
  }
  if (!overrides.empty())
    features += "," + overrides;
  t.features = features;
  return t;
}

// On an AArch64 machine the host is such a target, with the CPU LLVM
// detects ("generic" when it cannot tell).
bool hostIsAarch64() {
  return llvm::Triple(LLVM_HOST_TRIPLE).getArch() == llvm::Triple::aarch64;
}

HostTarget aarch64Host(const std::string &cpu, const std::string &overrides) {
  std::string name = cpu;
  if (name.empty()) {
    name = llvm::sys::getHostCPUName().str();
    if (name.empty() || llvm::AArch64::parseCpu(name).Name == "invalid")
      name = "generic";
  }
  return aarch64Target(llvm::Triple(LLVM_HOST_TRIPLE), name, overrides);
}

} // namespace

const HostTarget &hostTarget() {
  static const HostTarget host =
      hostIsAarch64() ? aarch64Host("", "") : fromFeatureMap(hostFeatureMap());
  return host;
}

HostTarget targetWithFeatures(const std::string &overrides) {
  if (hostIsAarch64())
    return aarch64Host("", overrides);
  FeatureMap features = hostFeatureMap(); // a copy, overridden below
  applyOverrides(features, overrides);
  HostTarget t = fromFeatureMap(features);
  // A CPU name implies features; a restricted set must not be undone by one.
  if (!overrides.empty())
    t.cpu = "x86-64";
  return t;
}

HostTarget targetFor(const std::string &cpu, const std::string &overrides) {
  if (hostIsAarch64())
    return aarch64Host(cpu, overrides);
  if (cpu.empty())
    return overrides.empty() ? hostTarget() : targetWithFeatures(overrides);
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
    throw Error(
        Error::Kind::Compile,
        "unknown target CPU '" + cpu +
            "' (an LLVM x86-64 CPU name: x86-64-v3, x86-64-v4, skylake-avx512, znver4, ...)");
  // The CPU's own features, nothing of the host's; overrides on top. The
  // name is kept: it is the tuning being pinned.
  // LLVM's table lists a CPU's features without what they imply (x86-64-v3
  // names avx2, not avx), so each is added as an override would be.
  llvm::SmallVector<llvm::StringRef, 64> own;
  llvm::X86::getFeaturesForCPU(cpu, own);
  FeatureMap features;
  std::string list;
  for (llvm::StringRef f : own)
    list += "+" + f.str() + ",";
  applyOverrides(features, list + overrides);
  return fromFeatureMap(features, cpu);
}

HostTarget targetFor(const std::string &triple, const std::string &cpu,
                     const std::string &overrides) {
  if (triple.empty() || runsOnHostArchitecture(llvm::Triple::normalize(triple)))
    return targetFor(cpu, overrides);
  llvm::Triple t(llvm::Triple::normalize(triple));
  if (t.getArch() == llvm::Triple::aarch64 && t.getOS() == llvm::Triple::UnknownOS)
    t = llvm::Triple("aarch64-unknown-linux-gnu"); // "aarch64" alone: an ELF object all the same
  if (t.getArch() == llvm::Triple::aarch64 && t.isOSLinux())
    return aarch64Target(t, cpu, overrides);
  throw Error(Error::Kind::Compile,
              "unsupported target '" + triple +
                  "': lanejit compiles for x86_64 and aarch64 Linux (x86_64-linux-gnu, "
                  "aarch64-linux-gnu)");
}

bool runsOnHostArchitecture(const std::string &triple) {
  return llvm::Triple(triple).getArch() == llvm::Triple(LLVM_HOST_TRIPLE).getArch();
}

} // namespace lanejit::jit

namespace lanejit::jit {

std::vector<std::string> featuresMissingOnHost(const std::string &features) {
  const FeatureMap &host = hostFeatureMap();
  std::vector<std::string> missing;
  std::stringstream in(features);
  std::string item;
  while (std::getline(in, item, ','))
    if (item.size() > 1 && item[0] == '+')
      if (auto it = host.find(item.substr(1)); it != host.end() && !it->second)
        missing.push_back(item.substr(1));
  return missing;
}

} // namespace lanejit::jit
