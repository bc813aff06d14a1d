// The persistent cache of one test: $XDG_CACHE_HOME points at a scratch
// folder (child processes inherit it) with LANEJIT_CACHE unset, and both
// are put back when the test ends.
#pragma once

#include "support/command_line.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

namespace lanejit::test {

class CacheHome {
public:
  explicit CacheHome(const std::string &prefix) : scratch_(prefix) {
    if (const char *old = std::getenv("XDG_CACHE_HOME"))
      saved_ = old;
    ::setenv("XDG_CACHE_HOME", scratch_.path().c_str(), 1);
    ::unsetenv("LANEJIT_CACHE");
  }
  ~CacheHome() {
    if (saved_.empty())
      ::unsetenv("XDG_CACHE_HOME");
    else
      ::setenv("XDG_CACHE_HOME", saved_.c_str(), 1);
    ::unsetenv("LANEJIT_CACHE");
  }
  CacheHome(const CacheHome &) = delete;
  CacheHome &operator=(const CacheHome &) = delete;
  const std::filesystem::path &path() const { return scratch_.path(); }
  std::string file(const std::string &name) const { return scratch_.file(name); }

private:
  ScratchDir scratch_;
  std::string saved_;
};

// Rewrites the "name=value" line of a tune record (or any such file).
inline void rewriteField(const std::string &path, const std::string &name,
                         const std::string &value) {
  std::string text = slurp(path);
  ASSERT_FALSE(text.empty()) << path;
  text = std::regex_replace(text, std::regex("\n" + name + "=[^\n]*\n"),
                            "\n" + name + "=" + value + "\n");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

} // namespace lanejit::test
