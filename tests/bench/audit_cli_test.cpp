// `lanejit audit BUNDLE` from the command line: PASS and exit 0 on a valid
// bundle; FAIL, one line per failure, and exit 1 on a tampered one.
#include "bench/audit_bundle_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set in tests/CMakeLists.txt)"
#endif

namespace lanejit::audit_test {
namespace {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

CliResult runAudit(const std::filesystem::path &bundle, const std::filesystem::path &out) {
  std::string command = std::string("'") + LANEJIT_CLI_PATH + "' audit '" + bundle.string() +
                        "' >'" + out.string() + "' 2>&1";
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readText(out)};
}

TEST(AuditCliTest, ValidBundlePrintsPassAndExitsZero) {
  TempDir dir("cli-valid");
  writeValidBundle(dir.path() / "b");
  CliResult result = runAudit(dir.path() / "b", dir.path() / "out.txt");
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(result.out.substr(0, 5), "PASS\n") << result.out;
}

TEST(AuditCliTest, TamperedBundlePrintsEachFailureAndExitsOne) {
  // Before: a valid bundle with one visit's guard check false and
  // chart.svg altered.
  TempDir dir("cli-tampered");
  writeValidBundle(dir.path() / "b");
  nlohmann::json bundle = readBundleJson(dir.path() / "b");
  bundle["cases"][0]["rounds"][1]["visits"][2]["checks"]["guards_intact"] = false;
  writeBundleJson(dir.path() / "b", bundle);
  writeText(dir.path() / "b" / "chart.svg", "<svg/>");
  // Action.
  CliResult result = runAudit(dir.path() / "b", dir.path() / "out.txt");
  // Expected: FAIL first, then both failures on their own lines.
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_EQ(result.out.substr(0, 5), "FAIL\n") << result.out;
  EXPECT_NE(result.out.find("\nfailed guard: case 'layernorm-3x33' round 1 visit 2"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("\naltered file hash: chart.svg:"), std::string::npos) << result.out;
}

TEST(AuditCliTest, MissingBundleFailsWithoutCrashing) {
  TempDir dir("cli-missing");
  CliResult result = runAudit(dir.path() / "nothing-here", dir.path() / "out.txt");
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("missing file: bundle.json"), std::string::npos) << result.out;
}

} // namespace
} // namespace lanejit::audit_test
