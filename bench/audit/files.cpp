// Files: the `files` map against the directory, byte for byte. Hashing is
// OpenSSL's SHA-256, not anything of the bench's.
#include "checks.h"
#include "json_fields.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>

namespace lanejit::audit {
namespace fs = std::filesystem;

std::string sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    return "<sha256 failed>";
  static const char *hex = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += hex[digest[i] >> 4];
    text += hex[digest[i] & 15];
  }
  return text;
}

std::optional<std::string> readFileBytes(const fs::path &path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return std::nullopt;
  return bytes;
}

bool isBundlePath(const std::string &path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string::npos)
    return false;
  for (const fs::path &part : fs::path(path))
    if (part == ".." || part == ".")
      return false;
  return true;
}

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

// Every regular file under `dir` except bundle.json, as bundle paths.
std::set<std::string> filesOnDisk(const fs::path &dir, Findings &findings) {
  std::set<std::string> found;
  std::error_code error;
  fs::recursive_directory_iterator it(dir, error), end;
  for (; !error && it != end; it.increment(error)) {
    std::string relative = fs::relative(it->path(), dir, error).generic_string();
    if (it->is_symlink(error))
      findings.fail(kind::kMalformed, relative, "is a symbolic link; a bundle holds files");
    else if (it->is_regular_file(error) && relative != "bundle.json")
      found.insert(relative);
  }
  if (error)
    findings.fail(kind::kMissingFile, dir.string(), "cannot list: " + error.message());
  return found;
}

void checkNamedPath(const Bundle &bundle, const std::string &where, const std::string &path,
                    Findings &findings) {
  if (path.empty())
    return; // a missing field, already reported
  if (!isBundlePath(path))
    findings.fail(kind::kMalformed, where,
                  "path '" + path + "' is not a relative path inside the bundle");
  else if (!bundle.files.count(path))
    findings.fail(kind::kUnlistedFile, where, "'" + path + "' is not listed in files");
}

void checkBinaries(const Bundle &bundle, Findings &findings) {
  auto it = bundle.environment.find("binaries");
  if (it == bundle.environment.end() || !it->is_array())
    return;
  for (const nlohmann::json &binary : *it) {
    if (!binary.is_object() || !binary.contains("path") || !binary["path"].is_string() ||
        !binary.contains("sha256") || !binary["sha256"].is_string()) {
      findings.fail(kind::kMalformed, "environment binaries",
                    describe(binary) + " lacks a path or sha256");
      continue;
    }
    std::string path = binary["path"].get<std::string>();
    std::optional<std::string> bytes = readFileBytes(path);
    if (!bytes)
      findings.note("binary " + path + " is not present here; its hash was not checked");
    else if (sha256Hex(*bytes) != lower(binary["sha256"].get<std::string>()))
      findings.note("binary " + path + " differs from the one recorded (rebuilt since?)");
  }
}

} // namespace

void checkFiles(const Bundle &bundle, const fs::path &dir, Findings &findings) {
  std::set<std::string> on_disk = filesOnDisk(dir, findings);
  for (const std::string &path : on_disk)
    if (!bundle.files.count(path))
      findings.fail(kind::kUnlistedFile, path, "is in the bundle but not listed in files");
  for (const auto &[path, hash] : bundle.files) {
    if (path == "bundle.json" || !isBundlePath(path)) {
      findings.fail(kind::kMalformed, "files",
                    "'" + path + "' cannot be listed (bundle.json, or outside the bundle)");
      continue;
    }
    if (!on_disk.count(path)) {
      findings.fail(kind::kMissingFile, path, "is listed in files but not in the bundle");
      continue;
    }
    std::optional<std::string> bytes = readFileBytes(dir / path);
    if (!bytes) {
      findings.fail(kind::kMissingFile, path, "cannot be read");
      continue;
    }
    std::string actual = sha256Hex(*bytes);
    if (actual != lower(hash))
      findings.fail(kind::kAlteredFileHash, path,
                    "files records sha256 " + hash + " but the file hashes to " + actual);
  }
  if (!bundle.files.count("report.md"))
    findings.fail(kind::kMissingFile, "report.md", "is not listed in files");
  for (const Case &c : bundle.cases) {
    checkNamedPath(bundle, c.where + " program_file", c.program_file, findings);
    for (const InputFile &input : c.inputs)
      checkNamedPath(bundle, c.where + " input '" + input.name + "'", input.file, findings);
    for (const Variant &v : c.variants) {
      checkNamedPath(bundle, c.where + " variant '" + v.name + "' output_file", v.output_file,
                     findings);
      for (const InputFile &out : v.output_files)
        checkNamedPath(bundle, c.where + " variant '" + v.name + "' output '" + out.name + "'",
                       out.file, findings);
    }
  }
  checkBinaries(bundle, findings);
}

} // namespace lanejit::audit
