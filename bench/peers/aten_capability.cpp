// Runs lanejit_aten_probe under ATen's own capability and under avx512
// (alternating, twice each, best of each), then sets ATEN_CPU_CAPABILITY to
// the faster. No torch headers here: this must run before any ATen call.
#include "peers/aten_capability.h"

#include "child_process.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

namespace lanejit::bench {
namespace {

constexpr const char *kVar = "ATEN_CPU_CAPABILITY";

std::string probePath() {
#ifdef LANEJIT_ATEN_PROBE_PATH
  return siblingExecutable("lanejit_aten_probe", LANEJIT_ATEN_PROBE_PATH);
#else
  return siblingExecutable("lanejit_aten_probe");
#endif
}

struct ProbeRun {
  bool ok = false;
  std::string capability, error;
  double ms = 0;
};

// One child run; `capability` empty means ATEN_CPU_CAPABILITY unset.
ProbeRun runProbe(const std::string &path, const std::string &capability) {
  ProbeRun run;
  std::vector<std::pair<std::string, std::string>> set;
  if (!capability.empty())
    set.emplace_back(kVar, capability);
  ChildRun child = runChild(path, {}, set, {kVar});
  char name[64] = {0}; // may hold spaces ("NO AVX")
  if (!child.exited_ok ||
      std::sscanf(child.out.c_str(), "ms_per_call=%lf capability=%63[^\n]", &run.ms, name) != 2 ||
      !(run.ms > 0)) {
    run.error = "probe " + (capability.empty() ? std::string("(own)") : capability) +
                " failed: " + (child.exited_ok ? "output '" + child.out + "'" : child.error);
    return run;
  }
  run.ok = true;
  run.capability = name;
  return run;
}

bool hostRunsAtenAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

AtenChoice choose() {
  AtenChoice choice;
  if (const char *user = std::getenv(kVar)) {
    choice.how = "user";
    choice.detail = user;
    return choice;
  }
  choice.how = "probe failed";
  std::string path = probePath();
  if (path.empty()) {
    choice.detail = "lanejit_aten_probe not found next to this executable or at its build path";
    return choice;
  }
  // ATen's avx512 kernels need AVX-512 F, BW, VL and DQ; elsewhere the
  // candidate would die of an illegal instruction, so there is no choice.
  if (!hostRunsAtenAvx512()) {
    choice.how = "no avx512";
    choice.detail = "this CPU has no AVX-512 (F, BW, VL, DQ)";
    return choice;
  }
  ProbeRun own[2], wide[2];
  for (int i = 0; i < 2; ++i) { // alternate so drift in machine load hits both
    own[i] = runProbe(path, "");
    wide[i] = runProbe(path, "avx512");
    for (const ProbeRun *r : {&own[i], &wide[i]})
      if (!r->ok) {
        choice.detail = r->error;
        return choice;
      }
  }
  choice.how = "probe";
  choice.own_name = own[0].capability;
  choice.avx512_name = wide[0].capability;
  choice.own_ms = std::min(own[0].ms, own[1].ms);
  choice.avx512_ms = std::min(wide[0].ms, wide[1].ms);
  if (choice.avx512_ms < choice.own_ms) {
    setenv(kVar, "avx512", 1);
    choice.set_avx512 = true;
  }
  return choice;
}

} // namespace

const AtenChoice &chooseAtenCapability() {
  static std::once_flag once;
  static AtenChoice choice;
  std::call_once(once, [] { choice = choose(); });
  return choice;
}

std::string capabilityFromConfig(const std::string &text) {
  const std::string key = "CPU capability usage: ";
  size_t at = text.find(key);
  if (at == std::string::npos)
    return "";
  at += key.size();
  return text.substr(at, text.find_first_of("\r\n", at) - at);
}

} // namespace lanejit::bench
