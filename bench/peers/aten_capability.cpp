// Runs lanejit_aten_probe under ATen's own capability and under avx512
// (alternating, twice each, best of each), then sets ATEN_CPU_CAPABILITY to
// the faster. No torch headers here: this must run before any ATen call.
#include "peers/aten_capability.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <spawn.h>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace lanejit::bench {
namespace {

constexpr const char *kVar = "ATEN_CPU_CAPABILITY";

std::string probePath() {
  std::vector<std::string> candidates;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    candidates.push_back(dir.substr(0, dir.rfind('/') + 1) + "lanejit_aten_probe");
  }
#ifdef LANEJIT_ATEN_PROBE_PATH
  candidates.push_back(LANEJIT_ATEN_PROBE_PATH);
#endif
  for (const std::string &c : candidates)
    if (access(c.c_str(), X_OK) == 0)
      return c;
  return "";
}

struct ProbeRun {
  bool ok = false;
  std::string capability, error;
  double ms = 0;
};

// One child run; `capability` empty means ATEN_CPU_CAPABILITY unset.
ProbeRun runProbe(const std::string &path, const std::string &capability) {
  ProbeRun run;
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "ATEN_CPU_CAPABILITY=", 20) != 0)
      env.emplace_back(*e);
  if (!capability.empty())
    env.push_back(std::string(kVar) + "=" + capability);
  std::vector<char *> envp;
  for (std::string &s : env)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = path;
  char *argv[] = {arg0.data(), nullptr};

  int fds[2];
  if (pipe(fds) != 0) {
    run.error = "pipe failed";
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; rc == 0 && (n = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  if (rc != 0) {
    run.error = "cannot start " + path + ": " + std::strerror(rc);
    return run;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  char name[64] = {0}; // may hold spaces ("NO AVX")
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(out.c_str(), "ms_per_call=%lf capability=%63[^\n]", &run.ms, name) != 2 ||
      !(run.ms > 0)) {
    run.error = "probe " + (capability.empty() ? std::string("(own)") : capability) +
                " failed, output: '" + out + "'";
    return run;
  }
  run.ok = true;
  run.capability = name;
  return run;
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
