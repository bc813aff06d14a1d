#include "cache/cache_bound.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::persistent {
namespace {

constexpr int64_t kStaleTemporarySeconds = 60 * 60; // a store renames within milliseconds
constexpr int64_t kRescanSeconds = 24 * 60 * 60;    // files of builds that keep no total

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool hexName(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Disk usage (what du shows), at least the length (a file the file system
// keeps inline may report no blocks).
uint64_t bytesOf(const struct stat &st) {
  return std::max<uint64_t>(static_cast<uint64_t>(st.st_size),
                            static_cast<uint64_t>(st.st_blocks) * 512);
}

bool before(const timespec &a, const timespec &b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

// The folder's files one by one: name, kind and status; lanejit's names
// that are not regular files (a link, a folder) are reported as foreign.
class Folder {
public:
  explicit Folder(const std::string &dir) : dir_(::opendir(dir.c_str())) {}
  ~Folder() {
    if (dir_)
      ::closedir(dir_);
  }
  Folder(const Folder &) = delete;
  Folder &operator=(const Folder &) = delete;
  explicit operator bool() const { return dir_ != nullptr; }
  int fd() const { return ::dirfd(dir_); }

  template <typename Visit> void each(Visit visit) {
    while (const dirent *e = ::readdir(dir_)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..")
        continue;
      FileKind kind = kindOf(e->d_name);
      struct stat st {};
      if (kind != FileKind::Foreign && ::fstatat(fd(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue; // removed by another process since readdir: not there
      if (kind != FileKind::Foreign && !S_ISREG(st.st_mode))
        kind = FileKind::Foreign;
      visit(e->d_name, kind, st);
    }
  }

private:
  DIR *dir_;
};

// The usage file, locked (flock) while this object lives: "<bytes> <time
// of the last scan>\n", bytes being lanejit's files as last scanned plus
// what was stored since.
class UsageFile {
public:
  explicit UsageFile(const std::string &dir)
      : fd_(::open((dir + "/" + kUsageFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0)
      return;
    int rc;
    do
      rc = ::flock(fd_, LOCK_EX);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~UsageFile() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  UsageFile(const UsageFile &) = delete;
  UsageFile &operator=(const UsageFile &) = delete;
  explicit operator bool() const { return fd_ >= 0; }

  // False when empty or damaged (a crash mid-write, another format).
  bool read(uint64_t &bytes, int64_t &scanned) const {
    char text[64];
    ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
    if (n <= 0)
      return false;
    text[n] = '\0';
    unsigned long long b = 0;
    long long s = 0;
    char end = 0;
    if (std::sscanf(text, "%llu %lld%c", &b, &s, &end) != 3 || end != '\n')
      return false;
    bytes = b;
    scanned = s;
    return true;
  }
  // Fixed width (42 bytes), so the file never needs truncating (which cost
  // a store another 3 us); anything after the newline is not read.
  void write(uint64_t bytes, int64_t scanned) const {
    char text[64];
    int n = std::snprintf(text, sizeof text, "%020llu %020lld\n",
                          static_cast<unsigned long long>(bytes), static_cast<long long>(scanned));
    (void)::pwrite(fd_, text, static_cast<size_t>(n), 0);
  }

private:
  int fd_;
};

// Held by the one process that scans the folder; others skip their scan.
// Where flock is unsupported the scan goes ahead: two scans at once remove
// more than needed, nothing else.
class ScanLock {
public:
  explicit ScanLock(const std::string &dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
      busy_ = true;
  }
  ~ScanLock() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  ScanLock(const ScanLock &) = delete;
  ScanLock &operator=(const ScanLock &) = delete;
  bool busy() const { return busy_; }

private:
  int fd_;
  bool busy_ = false;
};

} // namespace

uint64_t lowWater(uint64_t cap) {
  return cap - cap / 5;
}

FileKind kindOf(const std::string &fileName) {
  std::string_view name = fileName;
  if (name == kUsageFile)
    return FileKind::Usage;
  if (name.size() < 64 || !hexName(name.substr(0, 64)))
    return FileKind::Foreign;
  name.remove_prefix(64);
  for (std::string_view suffix : {std::string_view(".o.cache"), std::string_view(".tune")}) {
    if (name.substr(0, suffix.size()) != suffix)
      continue;
    std::string_view rest = name.substr(suffix.size());
    if (rest.empty())
      return suffix == ".tune" ? FileKind::TuneRecord : FileKind::Object;
    // ".tmp.<pid>.<serial>", as store() and writeTuneRecord() name them.
    if (rest.substr(0, 5) != ".tmp.")
      return FileKind::Foreign;
    rest.remove_prefix(5);
    size_t dot = rest.find('.');
    if (dot != std::string_view::npos && digits(rest.substr(0, dot)) &&
        digits(rest.substr(dot + 1)))
      return FileKind::Temporary;
    return FileKind::Foreign;
  }
  return FileKind::Foreign;
}

std::optional<uint64_t> parseCapMb(const std::string &text) {
  size_t dot = text.find('.');
  if (!digits(std::string_view(text).substr(0, dot)) ||
      (dot != std::string::npos && !digits(std::string_view(text).substr(dot + 1))))
    return std::nullopt;
  double mib = std::strtod(text.c_str(), nullptr);
  if (mib == 0)
    return 0;
  constexpr double kMax = 9.0e18; // beyond any disk; keeps the conversion defined
  double bytes = std::min(std::round(mib * 1048576.0), kMax);
  return std::max<uint64_t>(1, static_cast<uint64_t>(bytes)); // 0 would mean unbounded
}

Cap capFromEnvironment() {
  Cap cap;
  const char *v = std::getenv("LANEJIT_CACHE_MAX_MB");
  if (!v || !*v)
    return cap;
  if (std::optional<uint64_t> bytes = parseCapMb(v)) {
    cap.bytes = *bytes;
    cap.from_environment = true;
  } else
    cap.ignored = v;
  return cap;
}

Usage usage(const std::string &dir) {
  Usage u;
  Folder folder(dir);
  if (!folder)
    return u;
  folder.each([&](const char *, FileKind kind, const struct stat &st) {
    switch (kind) {
    case FileKind::Object: ++u.objects; break;
    case FileKind::TuneRecord: ++u.tune_records; break;
    case FileKind::Temporary: ++u.temporaries; break;
    case FileKind::Usage: return;
    case FileKind::Foreign: ++u.foreign; return;
    }
    u.bytes += bytesOf(st);
  });
  return u;
}

Pruned prune(const std::string &dir, uint64_t cap) {
  Pruned result;
  Folder folder(dir);
  if (!folder)
    return result;
  struct Candidate {
    std::string name;
    timespec used;
    uint64_t bytes;
  };
  std::vector<Candidate> candidates;
  uint64_t total = 0;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto remove = [&](const char *name, uint64_t bytes) {
    // Gone already (another process pruned or cleared it): not ours to count.
    if (::unlinkat(folder.fd(), name, 0) != 0)
      return errno == ENOENT;
    ++result.removed_files;
    result.removed_bytes += bytes;
    return true;
  };
  folder.each([&](const char *name, FileKind kind, const struct stat &st) {
    uint64_t bytes = bytesOf(st);
    if (kind == FileKind::Temporary && now - st.st_mtim.tv_sec >= kStaleTemporarySeconds &&
        remove(name, bytes))
      return;
    if (kind == FileKind::Object || kind == FileKind::TuneRecord || kind == FileKind::Temporary)
      total += bytes;
    if (kind == FileKind::Object || kind == FileKind::TuneRecord)
      candidates.push_back({name, st.st_mtim, bytes});
  });
  if (cap != 0 && total > cap) {
    // Oldest first; the name breaks ties so the order does not depend on
    // the directory's.
    std::sort(candidates.begin(), candidates.end(), [](const Candidate &a, const Candidate &b) {
      if (before(a.used, b.used) || before(b.used, a.used))
        return before(a.used, b.used);
      return a.name < b.name;
    });
    for (const Candidate &c : candidates) {
      if (total <= lowWater(cap))
        break;
      if (remove(c.name.c_str(), c.bytes))
        total -= c.bytes;
    }
  }
  result.bytes_after = total;
  return result;
}

void noteStored(const std::string &dir, const std::string &file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    return; // replaced or removed already: someone else counted it
  uint64_t cap = capFromEnvironment().bytes;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  {
    UsageFile total(dir);
    if (!total)
      return;
    uint64_t bytes = 0;
    int64_t scanned = 0;
    if (total.read(bytes, scanned)) {
      bytes += bytesOf(st);
      bool due = now - scanned >= kRescanSeconds || scanned - now >= kRescanSeconds;
      if (!due && (cap == 0 || bytes <= cap)) {
        total.write(bytes, scanned);
        return;
      }
      total.write(bytes, scanned);
    }
  }
  // Scanned without the usage file's lock, so stores go on meanwhile.
  ScanLock scanning(dir);
  if (scanning.busy())
    return;
  Pruned pruned = prune(dir, cap);
  UsageFile total(dir);
  if (total)
    // What could not be removed (young temporaries, files not ours to
    // remove) is left out, so it cannot make every store scan again.
    total.write(cap == 0 ? pruned.bytes_after : std::min(pruned.bytes_after, lowWater(cap)), now);
}

void markUsed(const std::string &file) {
  (void)::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);
}

Usage clear(const std::string &dir) {
  Usage removed;
  Folder folder(dir);
  if (!folder)
    return removed;
  folder.each([&](const char *name, FileKind kind, const struct stat &st) {
    if (kind == FileKind::Foreign) {
      ++removed.foreign; // left alone
      return;
    }
    if (::unlinkat(folder.fd(), name, 0) != 0)
      return;
    if (kind == FileKind::Usage)
      return;
    ++(kind == FileKind::Object       ? removed.objects
       : kind == FileKind::TuneRecord ? removed.tune_records
                                      : removed.temporaries);
    removed.bytes += bytesOf(st);
  });
  return removed;
}

} // namespace lanejit::persistent
