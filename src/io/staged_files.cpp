// Writing files whole or not at all (io/staged_files.h).
#include "io/staged_files.h"

#include "io/temporary_name.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::io {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw Error(Error::Kind::Io, fmt::format("{}: {}", path, what));
}

std::string errnoText(int error) {
  return std::strerror(error);
}

// The file a rename must replace: `path` with its symbolic links resolved,
// so writing through a link updates the file it names rather than the link.
fs::path renameTarget(const std::string &path) {
  // Absolute first: a relative name with no existing prefix would stay
  // relative, without a parent directory.
  fs::path absolute = fs::absolute(fs::path(path));
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : resolved;
}

// Opens a new temporary file beside the target (".NAME.tmp-XXXXXX"). Mode
// 0666 lets the umask apply as for any new file.
int openTemporary(const std::string &path, const fs::path &target, std::string &temporary) {
  for (int attempt = 0; attempt < kTemporaryNameAttempts; ++attempt) {
    temporary = temporaryNameBeside(target, "tmp").string();
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST)
      fail(path, fmt::format("cannot create a file in {}: {}", target.parent_path().string(),
                             errnoText(errno)));
  }
  fail(path, "cannot find a free temporary name in " + target.parent_path().string());
}

// Writes every byte, then fsyncs; the errno of the first failure, or 0.
int writeAll(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    done += static_cast<size_t>(n);
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

// After renames, the directory entries themselves reach the disk. A failure
// here loses nothing already visible, so it is not reported.
void syncDirectory(const fs::path &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  ::fsync(fd);
  ::close(fd);
}

} // namespace

StagedFiles::~StagedFiles() {
  for (const Staged &s : staged_)
    if (!s.temporary.empty())
      ::unlink(s.temporary.c_str());
}

void StagedFiles::add(const std::string &path, std::string_view bytes) {
  if (path.empty())
    throw Error(Error::Kind::Io, "an output path is empty");
  fs::path target = renameTarget(path);
  struct stat existing {};
  bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode))
    fail(path, S_ISDIR(existing.st_mode) ? "is a directory" : "is not a regular file");

  Staged s{path, target.string(), ""};
  int fd = openTemporary(path, target, s.temporary);
  int error = writeAll(fd, bytes);
  if (!error && exists && ::fchmod(fd, existing.st_mode & 07777) != 0)
    error = errno;
  if (::close(fd) != 0 && !error)
    error = errno;
  if (error) {
    ::unlink(s.temporary.c_str());
    fail(path, "cannot write: " + errnoText(error));
  }
  staged_.push_back(std::move(s));
}

void StagedFiles::commit() {
  std::set<fs::path> dirs;
  for (Staged &s : staged_) {
    if (::rename(s.temporary.c_str(), s.target.c_str()) != 0)
      fail(s.path, "cannot replace: " + errnoText(errno));
    s.temporary.clear();
    dirs.insert(fs::path(s.target).parent_path());
  }
  staged_.clear();
  for (const fs::path &dir : dirs)
    syncDirectory(dir);
}

void writeFileAtomically(const std::string &path, std::string_view bytes) {
  StagedFiles files;
  files.add(path, bytes);
  files.commit();
}

} // namespace lanejit::io
