// Child processes for the bench's probes (bench/child_process.h).
#include "child_process.h"

#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace lanejit::bench {

ChildRun runChild(const std::string &path, const std::vector<std::string> &args,
                  const std::vector<std::pair<std::string, std::string>> &set,
                  const std::vector<std::string> &unset) {
  ChildRun run;
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool drop = false;
    for (const std::string &u : unset)
      drop = drop || name == u;
    for (const auto &[n, v] : set)
      drop = drop || name == n;
    if (!drop)
      env.push_back(std::move(entry));
  }
  for (const auto &[n, v] : set)
    env.push_back(n + "=" + v);
  std::vector<char *> envp, argv;
  for (std::string &s : env)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argStrings{path};
  argStrings.insert(argStrings.end(), args.begin(), args.end());
  for (std::string &s : argStrings)
    argv.push_back(s.data());
  argv.push_back(nullptr);

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
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  char buf[512];
  for (ssize_t n; rc == 0 && (n = read(fds[0], buf, sizeof buf)) > 0;)
    run.out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  if (rc != 0) {
    run.error = "cannot start " + path + ": " + std::strerror(rc);
    return run;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  run.exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!run.exited_ok)
    run.error = path + " failed (status " + std::to_string(status) + "), output: '" + run.out + "'";
  return run;
}

std::string siblingExecutable(const std::string &name, const std::string &fallback) {
  std::vector<std::string> candidates;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    candidates.push_back(dir.substr(0, dir.rfind('/') + 1) + name);
  }
  if (!fallback.empty())
    candidates.push_back(fallback);
  for (const std::string &c : candidates)
    if (access(c.c_str(), X_OK) == 0)
      return c;
  return "";
}

} // namespace lanejit::bench
