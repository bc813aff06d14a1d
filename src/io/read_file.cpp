#include "io/read_file.h"

#include <lanejit/error.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::io {

std::optional<std::string> readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int saved = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    errno = saved;
    return std::nullopt;
  }
  std::string bytes;
  // The size is a hint: the file may grow or shrink while it is read.
  bytes.resize(static_cast<size_t>(st.st_size) + 1);
  size_t have = 0;
  for (;;) {
    if (have == bytes.size())
      bytes.resize(bytes.size() * 2);
    ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
      return std::nullopt;
    }
    if (n == 0)
      break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(have);
  return bytes;
}

std::string readUserFile(const std::string &path) {
  std::optional<std::string> bytes = readFile(path);
  if (!bytes) {
    int error = errno; // before any allocation below
    throw Error(Error::Kind::Io,
                "cannot read '" + path +
                    "': " + (error == EISDIR ? "it is a directory" : std::strerror(error)));
  }
  return std::move(*bytes);
}

} // namespace lanejit::io
