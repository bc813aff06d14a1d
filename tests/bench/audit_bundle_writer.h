// tests/bench/audit_bundle_writer.h — a small, valid evidence bundle for the
// audit's tests, written by test-only code (not the bench's): LayerNorm at
// 3 x 33 with three variants — two lanejit configurations whose outputs
// come from lanejit::compile + run, and a plain-loop "peer" — visited in
// the six orders, with hand-made samples. Plus helpers to tamper with it.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace lanejit::audit_test {

inline constexpr const char *kCaseId = "layernorm-3x33";

// Writes the bundle into `dir` (created; must not exist yet).
void writeValidBundle(const std::filesystem::path &dir);

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
public:
  explicit TempDir(std::string_view name);
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

nlohmann::json readBundleJson(const std::filesystem::path &dir);
void writeBundleJson(const std::filesystem::path &dir, const nlohmann::json &bundle);
// Records the file's current SHA-256 in bundle.json's `files` (so a
// tampering test can leave only the check it aims at to catch it).
void rehash(const std::filesystem::path &dir, const std::string &file);
std::string readText(const std::filesystem::path &path);
void writeText(const std::filesystem::path &path, const std::string &text);
// The SHA-256 of `bytes` as lowercase hex (OpenSSL, called directly).
std::string sha256(std::string_view bytes);

} // namespace lanejit::audit_test
