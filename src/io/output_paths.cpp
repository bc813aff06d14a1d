// Checking output paths up front (io/output_paths.h).
#include "io/output_paths.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::io {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw Error(Error::Kind::Io, fmt::format("{}: {}", path, what));
}

// A path resolved for comparison, and the file's identity when it exists.
struct Resolved {
  std::string given;
  fs::path path;
  std::optional<std::pair<dev_t, ino_t>> identity;

  bool sameFile(const Resolved &other) const {
    return path == other.path || (identity && identity == other.identity);
  }
};

Resolved resolve(const std::string &given) {
  Resolved r{given, {}, {}};
  std::error_code ec;
  // Absolute first: a relative name with no existing prefix would stay
  // relative, without a parent directory to check.
  fs::path absolute = fs::absolute(fs::path(given));
  r.path = fs::weakly_canonical(absolute, ec);
  if (ec)
    r.path = absolute.lexically_normal();
  struct stat st {};
  if (::stat(given.c_str(), &st) == 0)
    r.identity = std::pair{st.st_dev, st.st_ino};
  return r;
}

// The checks that concern one output alone.
void checkOne(const Resolved &out) {
  struct stat st {};
  if (::stat(out.given.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      fail(out.given, "is a directory; an output must be a file");
    if (!S_ISREG(st.st_mode))
      fail(out.given, "is not a regular file; an output must be a file");
  }
  std::string dir = out.path.parent_path().string();
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      fail(out.given, fmt::format("directory {} does not exist", dir));
    if (errno == ENOTDIR)
      fail(out.given, fmt::format("{} is not a directory", dir));
    fail(out.given, fmt::format("cannot use directory {}: {}", dir, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode))
    fail(out.given, fmt::format("{} is not a directory", dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail(out.given, fmt::format("cannot write in directory {}: {}", dir, std::strerror(errno)));
}

} // namespace

void checkOutputPaths(const std::vector<std::string> &outputs,
                      const std::vector<std::string> &inputs) {
  std::vector<Resolved> outs, ins;
  for (const std::string &path : outputs) {
    if (path.empty())
      throw Error(Error::Kind::Io, "an output path is empty");
    outs.push_back(resolve(path));
    checkOne(outs.back());
  }
  for (const std::string &path : inputs)
    ins.push_back(resolve(path));
  for (size_t i = 0; i < outs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (outs[i].sameFile(outs[j]))
        fail(outs[i].given, outs[i].given == outs[j].given
                                ? std::string("named twice as an output")
                                : fmt::format("is the same file as output {}", outs[j].given));
    for (const Resolved &in : ins)
      if (outs[i].sameFile(in))
        fail(outs[i].given, outs[i].given == in.given
                                ? std::string("is also an input; write the output to another file")
                                : fmt::format("is the same file as input {}; write the output to "
                                              "another file",
                                              in.given));
  }
}

} // namespace lanejit::io
