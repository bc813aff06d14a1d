// A directory that appears whole or not at all (io/staged_directory.h).
#include "io/staged_directory.h"

#include "io/temporary_name.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::io {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path &path, const std::string &what) {
  throw Error(Error::Kind::Io, fmt::format("{}: {}", path.string(), what));
}

// A directory may only be replaced by rename(2) when it is empty.
void requireAbsentOrEmpty(const fs::path &path) {
  std::error_code ec;
  fs::file_status status = fs::symlink_status(path, ec);
  if (!fs::exists(status))
    return;
  if (!fs::is_directory(status))
    fail(path, "exists and is not a directory; a bundle needs a fresh directory");
  if (!fs::is_empty(path, ec) || ec)
    fail(path, "exists and is not empty; a bundle needs a fresh directory");
}

} // namespace

StagedDirectory::StagedDirectory(fs::path path) : path_(std::move(path)) {
  if (path_.empty())
    throw Error(Error::Kind::Io, "the output directory path is empty");
  // "out/" names the directory "out", not an empty last component.
  if (!path_.has_filename())
    path_ = path_.parent_path();
  requireAbsentOrEmpty(path_);
  fs::path parent = fs::absolute(path_).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    fail(path_, fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));

  for (int attempt = 0; attempt < kTemporaryNameAttempts; ++attempt) {
    fs::path candidate = temporaryNameBeside(fs::absolute(path_), "partial");
    // 0777: the umask applies as for any new directory.
    if (::mkdir(candidate.c_str(), 0777) == 0) {
      staging_ = candidate;
      return;
    }
    if (errno != EEXIST)
      fail(path_, fmt::format("cannot create a directory in {}: {}", parent.string(),
                              std::strerror(errno)));
  }
  fail(path_, "cannot find a free temporary name in " + parent.string());
}

StagedDirectory::~StagedDirectory() {
  if (committed_)
    return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

void StagedDirectory::commit() {
  // Checked again: something may have appeared there during a long run.
  requireAbsentOrEmpty(path_);
  if (::rename(staging_.c_str(), path_.c_str()) != 0)
    fail(path_, fmt::format("cannot rename {} to it: {}", staging_.string(), std::strerror(errno)));
  committed_ = true;
  // The new entry reaches the disk; failing here loses nothing visible.
  int fd = ::open(fs::absolute(path_).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

} // namespace lanejit::io
