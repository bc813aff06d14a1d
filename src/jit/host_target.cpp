#include "jit/host_target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <map>
#include <sstream>

namespace lanejit::jit {
namespace {

HostTarget fromFeatureMap(const std::map<std::string, bool> &features) {
  HostTarget t;
  t.triple = llvm::sys::getProcessTriple();
  auto has = [&](const char *f) {
    auto it = features.find(f);
    return it != features.end() && it->second;
  };
  std::ostringstream list;
  bool first = true;
  for (const auto &[name, on] : features) {
    list << (first ? "" : ",") << (on ? "+" : "-") << name;
    first = false;
  }
  t.features = list.str();
  t.avx512f = has("avx512f");
  t.avx = has("avx");
  t.fma = has("fma");
  std::string host = llvm::sys::getHostCPUName().str();
  if (host != "generic" && host != "unknown" && !host.empty())
    t.cpu = host;
  else if (t.avx512f && has("avx512bw") && has("avx512dq") && has("avx512vl") && has("avx512cd"))
    t.cpu = "x86-64-v4";
  else if (has("avx2") && t.fma && has("bmi2"))
    t.cpu = "x86-64-v3";
  else
    t.cpu = "x86-64";
  return t;
}

std::map<std::string, bool> hostFeatureMap() {
  llvm::StringMap<bool> raw;
  std::map<std::string, bool> features;
  if (llvm::sys::getHostCPUFeatures(raw))
    for (const auto &entry : raw)
      features[entry.getKey().str()] = entry.getValue();
  return features;
}

} // namespace

const HostTarget &hostTarget() {
  static const HostTarget host = fromFeatureMap(hostFeatureMap());
  return host;
}

HostTarget targetWithFeatures(const std::string &overrides) {
  std::map<std::string, bool> features = hostFeatureMap();
  std::stringstream in(overrides);
  std::string item;
  while (std::getline(in, item, ','))
    if (item.size() > 1 && (item[0] == '+' || item[0] == '-'))
      features[item.substr(1)] = item[0] == '+';
  HostTarget t = fromFeatureMap(features);
  // A CPU name implies features; a restricted set must not be undone by one.
  if (!overrides.empty())
    t.cpu = "x86-64";
  return t;
}

} // namespace lanejit::jit
