// The audit on a valid bundle and on bundles it cannot read: it passes the
// first and reports, without throwing, what is wrong with the others. The
// tamperings it must catch are in audit_mutation_test.cpp.
#include "audit.h"
#include "checks.h" // the audit's own median and SHA-256

#include "bench/audit_bundle_writer.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace lanejit::audit_test {
namespace {

std::string listed(const audit::AuditResult &result) {
  std::string text;
  for (const std::string &f : result.failures)
    text += "\n  " + f;
  return text.empty() ? " (none)" : text;
}

// Some failure starts with "<kind>:" and mentions every one of `words`.
::testing::AssertionResult failsWith(const audit::AuditResult &result, const std::string &kind,
                                     std::vector<std::string> words = {}) {
  for (const std::string &f : result.failures) {
    bool all = f.rfind(kind + ":", 0) == 0;
    for (const std::string &w : words)
      all = all && f.find(w) != std::string::npos;
    if (all)
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "no '" << kind << "' failure; failures:" << listed(result);
}

TEST(AuditTest, ValidBundlePasses) {
  // Before: a bundle written by the test-only writer, every claim true.
  TempDir dir("valid");
  writeValidBundle(dir.path() / "b");
  // Action.
  audit::AuditResult result = audit::auditBundle(dir.path() / "b");
  // Expected: PASS, nothing to report.
  EXPECT_TRUE(result.pass()) << listed(result);
}

TEST(AuditTest, MissingDirectoryIsAFailureNotAThrow) {
  TempDir dir("nodir");
  audit::AuditResult result = audit::auditBundle(dir.path() / "does-not-exist");
  EXPECT_TRUE(failsWith(result, "missing file", {"bundle.json"}));
}

TEST(AuditTest, TruncatedJsonIsMalformed) {
  TempDir dir("truncated");
  writeValidBundle(dir.path() / "b");
  std::string text = readText(dir.path() / "b" / "bundle.json");
  writeText(dir.path() / "b" / "bundle.json", text.substr(0, text.size() / 2));
  audit::AuditResult result = audit::auditBundle(dir.path() / "b");
  EXPECT_TRUE(failsWith(result, "malformed", {"not valid JSON"}));
}

TEST(AuditTest, NaNLiteralInJsonIsMalformed) {
  // Before: a sample written as NaN, which JSON cannot hold.
  TempDir dir("nanliteral");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["cases"][0]["rounds"][0]["visits"][0]["samples_s"][0] = "__NAN__";
  std::string text = bundle.dump(2);
  text.replace(text.find("\"__NAN__\""), 9, "NaN");
  writeText(dir.path() / "b" / "bundle.json", text);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir.path() / "b"), "malformed", {"not valid JSON"}));
}

TEST(AuditTest, MissingFieldNamesTheVisitAndField) {
  TempDir dir("nofield");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["cases"][0]["rounds"][2]["visits"][1].erase("reps");
  writeBundleJson(dir.path() / "b", bundle);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir.path() / "b"), "malformed",
                        {"round 2 visit 1", "'reps' is missing"}));
}

TEST(AuditTest, WrongTypeIsMalformed) {
  TempDir dir("wrongtype");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["cases"][0]["rounds"][1]["visits"][0]["checks"]["guards_intact"] = "yes";
  bundle["cases"][0]["variants"] = "all of them";
  writeBundleJson(dir.path() / "b", bundle);
  audit::AuditResult result = audit::auditBundle(dir.path() / "b");
  EXPECT_TRUE(failsWith(result, "malformed", {"round 1 visit 0", "guards_intact"}));
  EXPECT_TRUE(failsWith(result, "malformed", {"'variants'", "not an array"}));
}

TEST(AuditTest, EnvironmentFieldsAreRequired) {
  TempDir dir("environment");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["environment"].erase("cpu_model");
  bundle["environment"]["load_after"] = {0.5, "high", 0.5};
  writeBundleJson(dir.path() / "b", bundle);
  audit::AuditResult result = audit::auditBundle(dir.path() / "b");
  EXPECT_TRUE(failsWith(result, "malformed", {"environment", "'cpu_model' is missing"}));
  EXPECT_TRUE(failsWith(result, "not a number", {"environment", "load_after[1]"}));
}

TEST(AuditTest, OtherFormatIsRejected) {
  TempDir dir("format");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["format"] = "lanejit-bench/2";
  writeBundleJson(dir.path() / "b", bundle);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir.path() / "b"), "malformed", {"lanejit-bench/2"}));
}

// Fields the format marks optional or informational: dropping or mistyping
// them may pass.
bool optionalField(const std::string &key) {
  for (const char *k : {"description", "first_failure", "compile_ms", "git_dirty",
                        "compile_options", "aten_cpu_capability", "roofline", "binaries"})
    if (key == k)
      return true;
  return false;
}

TEST(AuditTest, EveryFieldDroppedOrMistypedIsReportedNotThrown) {
  // Before: a valid bundle. Action: for every member of one of each kind of
  // object, drop it, or replace it with a value of another type.
  TempDir dir("everyfield");
  writeValidBundle(dir.path() / "b");
  const nlohmann::json valid = readBundleJson(dir.path() / "b");
  std::vector<nlohmann::json::json_pointer> objects;
  for (const char *p :
       {"", "/environment", "/protocol", "/cases/0", "/cases/0/variants/0",
        "/cases/0/variants/0/claims/0", "/cases/0/variants/2", "/cases/0/rounds/0",
        "/cases/0/rounds/0/visits/0", "/cases/0/rounds/0/visits/0/checks", "/cases/0/summary",
        "/cases/0/summary/ratios/0", "/cases/0/summary/roofline", "/cases/0/inputs/0"})
    objects.emplace_back(p);
  int audits = 0;
  for (const auto &pointer : objects)
    for (auto it = valid.at(pointer).begin(); it != valid.at(pointer).end(); ++it)
      for (bool drop : {true, false}) {
        nlohmann::json bundle = valid;
        nlohmann::json &object = bundle.at(pointer);
        if (drop)
          object.erase(it.key());
        else
          object[it.key()] = it.value().is_string() ? nlohmann::json(7) : nlohmann::json("x");
        writeBundleJson(dir.path() / "b", bundle);
        audit::AuditResult result = audit::auditBundle(dir.path() / "b");
        ++audits;
        std::string what =
            (drop ? "dropping " : "mistyping ") + pointer.to_string() + "/" + it.key();
        for (const std::string &f : result.failures)
          EXPECT_EQ(f.find("the audit stopped"), std::string::npos) << what << ": " << f;
        if (!optionalField(it.key())) {
          EXPECT_FALSE(result.pass()) << what << " passed";
        }
      }
  EXPECT_GT(audits, 100);
}

TEST(AuditTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(audit::median({3, 1, 2}), 2);
  EXPECT_EQ(audit::median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(audit::median({5}), 5);
}

TEST(AuditTest, Sha256KnownAnswers) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(audit::sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(audit::sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(AuditTest, BundlePathsStayInside) {
  EXPECT_TRUE(audit::isBundlePath("inputs/x.npy"));
  EXPECT_FALSE(audit::isBundlePath("../x.npy"));
  EXPECT_FALSE(audit::isBundlePath("/etc/passwd"));
  EXPECT_FALSE(audit::isBundlePath("inputs/../../x"));
  EXPECT_FALSE(audit::isBundlePath(""));
}

} // namespace
} // namespace lanejit::audit_test
