#include "cache/persistent_cache.h"

#include "backend/backend.h"
#include "io/read_file.h"
#include "io/sha256.h"
#include "cache/cache_bound.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::persistent {
namespace {

namespace fs = std::filesystem;

constexpr const char *kMagic = "lanejit-object-cache 1\n";

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool disabled() {
  const char *v = env("LANEJIT_CACHE");
  if (!v)
    return false;
  std::string s = v;
  return s == "off" || s == "0" || s == "false" || s == "no";
}

// Length-prefixed fields: "<bytes>\n<bytes of data>".
void putField(std::string &out, const std::string &field) {
  out += std::to_string(field.size());
  out += '\n';
  out += field;
}

bool takeField(const std::string &in, size_t &at, std::string &field) {
  size_t newline = in.find('\n', at);
  if (newline == std::string::npos || newline == at || newline - at > 19)
    return false;
  size_t length = 0;
  for (size_t i = at; i < newline; ++i) {
    if (in[i] < '0' || in[i] > '9')
      return false;
    length = length * 10 + static_cast<size_t>(in[i] - '0');
  }
  at = newline + 1;
  if (length > in.size() - at)
    return false;
  field = in.substr(at, length);
  at += length;
  return true;
}

fs::path fileFor(const std::string &dir, const std::string &key) {
  return fs::path(dir) / (io::sha256Hex(key.data(), key.size()) + ".o.cache");
}

} // namespace

std::string directory() {
  return disabled() ? std::string() : folder();
}

std::string folder() {
  if (const char *xdg = env("XDG_CACHE_HOME"))
    return (fs::path(xdg) / "lanejit").string();
  if (const char *home = env("HOME"))
    return (fs::path(home) / ".cache" / "lanejit").string();
  return {};
}

const std::string &buildIdentity() {
  static const std::string identity = [] {
    std::string id = "lanejit " LANEJIT_VERSION_STRING "; " + backend::version();
    // The binary this code is linked into (executable, shared library or
    // Python module): any rebuild changes its size or time.
    Dl_info info{};
    struct stat st {};
    if (dladdr(reinterpret_cast<void *>(&buildIdentity), &info) && info.dli_fname &&
        ::stat(info.dli_fname, &st) == 0)
      id += std::string("; binary ") + info.dli_fname + " " + std::to_string(st.st_size) + " " +
            std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    else
      id += "; binary unknown " + std::to_string(::getpid()); // no reuse across processes
    return id;
  }();
  return identity;
}

std::optional<Entry> load(const std::string &key) {
  std::string dir = directory();
  if (dir.empty())
    return std::nullopt;
  fs::path path = fileFor(dir, key);
  std::optional<std::string> read = io::readFile(path.string());
  if (!read)
    return std::nullopt;
  const std::string &file = *read;
  std::string magic = kMagic;
  size_t digestEnd = magic.size() + 64;
  if (file.size() < digestEnd + 1 || file.compare(0, magic.size(), magic) != 0 ||
      file[digestEnd] != '\n')
    return std::nullopt;
  std::string payload = file.substr(digestEnd + 1);
  if (file.compare(magic.size(), 64, io::sha256Hex(payload.data(), payload.size())) != 0)
    return std::nullopt;
  Entry e;
  std::string storedKey;
  size_t at = 0;
  if (!takeField(payload, at, storedKey) || storedKey != key ||
      !takeField(payload, at, e.entry_symbol) || !takeField(payload, at, e.counts) ||
      !takeField(payload, at, e.object) || at != payload.size() || e.entry_symbol.empty() ||
      e.object.empty())
    return std::nullopt;
  markUsed(path.string());
  return e;
}

void store(const std::string &key, const Entry &entry) {
  std::string dir = directory();
  if (dir.empty())
    return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return;
  std::string payload;
  putField(payload, key);
  putField(payload, entry.entry_symbol);
  putField(payload, entry.counts);
  putField(payload, entry.object);
  fs::path target = fileFor(dir, key);
  // A name no other process or thread uses; renamed over the target, so a
  // reader sees the old file or the new one, never a part.
  static std::atomic<uint64_t> serial{0};
  fs::path temporary = target;
  temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << kMagic << io::sha256Hex(payload.data(), payload.size()) << '\n' << payload;
    if (!out.flush()) {
      fs::remove(temporary, ec);
      return;
    }
  }
  fs::rename(temporary, target, ec);
  if (ec)
    fs::remove(temporary, ec);
  else
    noteStored(dir, target.string());
}

} // namespace lanejit::persistent
