// The audit's mutation self-test: each test tampers with a fresh copy of a
// valid bundle in one way and expects a failure of that tampering's class.
// Where a tampering would also break a file hash, the test re-records the
// hash, so only the check under test can catch it.
#include "audit.h"

#include "bench/audit_bundle_writer.h"
#include "npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>

namespace lanejit::audit_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kOutput = std::string("outputs/") + kCaseId + "/spec_on.npy";

class AuditMutationTest : public ::testing::Test {
public:
  static void SetUpTestSuite() {
    valid_ = new TempDir("mutation-valid");
    writeValidBundle(valid_->path() / "b");
  }
  static void TearDownTestSuite() { delete valid_; }

  void SetUp() override {
    copy_ = std::make_unique<TempDir>(
        std::string("mutation-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::copy(valid_->path() / "b", dir(), fs::copy_options::recursive);
  }

  fs::path dir() const { return copy_->path() / "b"; }
  json &theCase(json &bundle) { return bundle["cases"][0]; }
  json &visit(json &bundle, int round, int index) {
    return theCase(bundle)["rounds"][round]["visits"][index];
  }
  // Applies `edit` to bundle.json, then audits the copy.
  audit::AuditResult auditAfter(const std::function<void(json &)> &edit) {
    json bundle = readBundleJson(dir());
    edit(bundle);
    writeBundleJson(dir(), bundle);
    return audit::auditBundle(dir());
  }

  static TempDir *valid_;
  std::unique_ptr<TempDir> copy_;
};
TempDir *AuditMutationTest::valid_ = nullptr;

// Some failure is of class `kind` (its message starts "<kind>:") and
// mentions `word`.
::testing::AssertionResult failsWith(const audit::AuditResult &result, const std::string &kind,
                                     const std::string &word = "") {
  std::string all;
  for (const std::string &f : result.failures) {
    if (f.rfind(kind + ":", 0) == 0 && f.find(word) != std::string::npos)
      return ::testing::AssertionSuccess();
    all += "\n  " + f;
  }
  return ::testing::AssertionFailure() << "no '" << kind << "' failure mentioning '" << word
                                       << "'; failures:" << (all.empty() ? " (none)" : all);
}

TEST_F(AuditMutationTest, UntouchedCopyPasses) {
  audit::AuditResult result = audit::auditBundle(dir());
  EXPECT_TRUE(result.pass()) << (result.failures.empty() ? "" : result.failures[0]);
}

TEST_F(AuditMutationTest, MissingVisit) {
  auto result = auditAfter([&](json &b) { theCase(b)["rounds"][2]["visits"].erase(1); });
  EXPECT_TRUE(failsWith(result, "missing visit", "round 2"));
}

TEST_F(AuditMutationTest, DuplicatedVisit) {
  auto result = auditAfter([&](json &b) {
    json &visits = theCase(b)["rounds"][0]["visits"];
    visits.push_back(visits[0]);
  });
  EXPECT_TRUE(failsWith(result, "duplicated visit", "round 0"));
}

TEST_F(AuditMutationTest, WrongMedian) {
  auto result = auditAfter([&](json &b) {
    json &v = visit(b, 1, 0);
    v["value_s"] = v["value_s"].get<double>() * 1.01;
  });
  EXPECT_TRUE(failsWith(result, "wrong median", "round 1 visit 0"));
}

TEST_F(AuditMutationTest, ValueThatIsTheMeanNotTheMedian) {
  auto result = auditAfter([&](json &b) {
    json &v = visit(b, 3, 2);
    double sum = 0;
    for (const json &s : v["samples_s"])
      sum += s.get<double>();
    v["value_s"] = sum / v["samples_s"].size() / v["reps"].get<double>();
  });
  EXPECT_TRUE(failsWith(result, "wrong median", "round 3 visit 2"));
}

TEST_F(AuditMutationTest, WrongRatio) {
  auto result = auditAfter([&](json &b) {
    json &r = theCase(b)["summary"]["ratios"][1];
    r["median"] = r["median"].get<double>() * 0.98;
  });
  EXPECT_TRUE(failsWith(result, "wrong ratio", "median"));
}

TEST_F(AuditMutationTest, WrongWinCount) {
  auto result = auditAfter([&](json &b) {
    json &r = theCase(b)["summary"]["ratios"][0];
    r["wins"] = r["wins"].get<int>() == 6 ? 5 : 6;
  });
  EXPECT_TRUE(failsWith(result, "wrong ratio", "wins"));
}

TEST_F(AuditMutationTest, FailedGuard) {
  auto result = auditAfter([&](json &b) { visit(b, 3, 2)["checks"]["guards_intact"] = false; });
  EXPECT_TRUE(failsWith(result, "failed guard", "round 3 visit 2"));
}

TEST_F(AuditMutationTest, WrongOracle) {
  // Before: the recorded oracle error understated tenfold.
  auto result = auditAfter([&](json &b) {
    json &checks = visit(b, 0, 0)["checks"];
    checks["oracle_max_abs_error"] = checks["oracle_max_abs_error"].get<double>() / 10;
  });
  EXPECT_TRUE(failsWith(result, "wrong oracle", "oracle_max_abs_error"));
}

TEST_F(AuditMutationTest, OutputFailingTheOracleWithConsistentHashes) {
  // Before: one output element made wrong, and every hash re-recorded to
  // match, so only recomputing the oracle can tell.
  npy::Array y = npy::read((dir() / kOutput).string());
  y.data[40] += 0.5f;
  npy::write((dir() / kOutput).string(), y);
  rehash(dir(), kOutput);
  std::string payload(reinterpret_cast<const char *>(y.data.data()), y.data.size() * 4);
  auto result = auditAfter([&](json &b) {
    for (json &round : theCase(b)["rounds"])
      for (json &v : round["visits"])
        if (v["variant"] == "spec_on")
          v["checks"]["output_sha256"] = sha256(payload);
  });
  EXPECT_TRUE(failsWith(result, "wrong oracle", "oracle_failures is 0"));
  EXPECT_TRUE(failsWith(result, "failed check", "y[1,7]"));
}

TEST_F(AuditMutationTest, WrongOrder) {
  auto result = auditAfter([&](json &b) {
    json &order = theCase(b)["rounds"][0]["order"];
    std::swap(order[0], order[2]);
  });
  EXPECT_TRUE(failsWith(result, "wrong order", "round 0"));
}

TEST_F(AuditMutationTest, OrdersThatAreNotBalanced) {
  // Before: round 1 re-run in round 0's order (visits too), so each round is
  // self-consistent but one order appears twice and one never.
  auto result = auditAfter([&](json &b) {
    json &rounds = theCase(b)["rounds"];
    json reordered = json::array();
    for (const json &name : rounds[0]["order"])
      for (const json &v : rounds[1]["visits"])
        if (v["variant"] == name)
          reordered.push_back(v);
    rounds[1]["visits"] = reordered;
    rounds[1]["order"] = rounds[0]["order"];
  });
  EXPECT_TRUE(failsWith(result, "wrong order", "appears in 2 rounds"));
  EXPECT_TRUE(failsWith(result, "wrong order", "in 3 of 6 rounds"));
}

TEST_F(AuditMutationTest, FailedStatus) {
  auto result = auditAfter([&](json &b) { visit(b, 4, 1)["status"] = "failed: timeout"; });
  EXPECT_TRUE(failsWith(result, "failed status", "round 4 visit 1"));
}

TEST_F(AuditMutationTest, BundleThatSaysFail) {
  auto result = auditAfter([&](json &b) { b["status"] = "fail"; });
  EXPECT_TRUE(failsWith(result, "failed status", "'fail'"));
}

TEST_F(AuditMutationTest, WrongSummary) {
  auto result = auditAfter([&](json &b) {
    json &t = theCase(b)["summary"]["time_s"]["naive"];
    t = t.get<double>() * 0.97;
  });
  EXPECT_TRUE(failsWith(result, "wrong summary", "time_s.naive"));
}

TEST_F(AuditMutationTest, WrongRoofline) {
  auto result = auditAfter([&](json &b) {
    json &t = theCase(b)["summary"]["roofline"]["min_time_s"];
    t = t.get<double>() * 2;
  });
  EXPECT_TRUE(failsWith(result, "wrong roofline", "min_time_s"));
}

// The floor (check_floor.cpp): each raw number it derives from, tampered
// alone, is caught; so is a derived number that no longer follows.
TEST_F(AuditMutationTest, FloorSteppedCountTampered) {
  auto result = auditAfter([&](json &b) {
    theCase(b)["summary"]["floor"]["compute"]["stepped"][1]["vector"] = 1100;
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "vector_per_call"));
}

TEST_F(AuditMutationTest, FloorInstructionCountTampered) {
  auto result = auditAfter([&](json &b) {
    json &n = theCase(b)["summary"]["floor"]["compute"]["instructions_per_call"];
    n = n.get<double>() - 1;
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "instructions_per_call"));
}

TEST_F(AuditMutationTest, FloorClockTampered) {
  // A faster clock sample: the recorded clock_hz is no longer the fastest.
  auto result = auditAfter([&](json &b) {
    theCase(b)["summary"]["floor"]["compute"]["clock_samples"][0]["seconds"] = 5e-4;
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "clock_hz"));
}

TEST_F(AuditMutationTest, FloorWidthTampered) {
  auto result = auditAfter(
      [&](json &b) { theCase(b)["summary"]["floor"]["compute"]["issue_width"] = 4; });
  EXPECT_TRUE(failsWith(result, "wrong floor", "compute seconds"));
}

TEST_F(AuditMutationTest, FloorRatioTampered) {
  auto result = auditAfter([&](json &b) {
    json &r = theCase(b)["summary"]["floor"]["ratio"];
    r = r.get<double>() * 0.9;
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "ratio"));
}

TEST_F(AuditMutationTest, FloorBoundTampered) {
  auto result =
      auditAfter([&](json &b) { theCase(b)["summary"]["floor"]["bound"] = "memory"; });
  EXPECT_TRUE(failsWith(result, "wrong floor", "bound is"));
}

TEST_F(AuditMutationTest, FloorColumnsNotWholePeriodsApart) {
  // Column extrapolation from calls that are not C's remainder mod 256.
  auto result = auditAfter([&](json &b) {
    json &compute = theCase(b)["summary"]["floor"]["compute"];
    compute["method"] = "columns";
    compute["stepped"][0]["cols"] = 5;
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "whole periods"));
}

TEST_F(AuditMutationTest, FloorUnavailableComputeMustBeNamedMemoryOnly) {
  // The compute part withdrawn: the floor is the memory part alone and must
  // say so; keeping "compute" and the old numbers is caught.
  auto result = auditAfter([&](json &b) {
    theCase(b)["summary"]["floor"]["compute"] = {{"unavailable", "test"}};
  });
  EXPECT_TRUE(failsWith(result, "wrong floor", "memory only"));
}

TEST_F(AuditMutationTest, ReportThatDisagreesWithTheSummary) {
  // Before: the naive column's time nudged in report.md, its hash re-recorded.
  double naive_us =
      readBundleJson(dir())["cases"][0]["summary"]["time_s"]["naive"].get<double>() * 1e6;
  char shown[64];
  std::snprintf(shown, sizeof shown, "| %.4g |", naive_us);
  std::string report = readText(dir() / "report.md");
  size_t at = report.find(shown);
  ASSERT_NE(at, std::string::npos) << report;
  report.replace(at, std::strlen(shown), "| 9.999 |");
  writeText(dir() / "report.md", report);
  rehash(dir(), "report.md");
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "wrong report", "naive"));
}

TEST_F(AuditMutationTest, AlteredOutput) {
  // Before: the lowest bit of one output element flipped (still within the
  // oracle's tolerance) and the file's hash re-recorded: only the visits'
  // output_sha256 can tell.
  npy::Array y = npy::read((dir() / kOutput).string());
  uint32_t bits;
  std::memcpy(&bits, &y.data[10], 4);
  bits ^= 1;
  std::memcpy(&y.data[10], &bits, 4);
  npy::write((dir() / kOutput).string(), y);
  rehash(dir(), kOutput);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "altered output", "spec_on"));
}

TEST_F(AuditMutationTest, OutputHashThatDiffersBetweenRounds) {
  auto result = auditAfter(
      [&](json &b) { visit(b, 5, 0)["checks"]["output_sha256"] = sha256("another output"); });
  EXPECT_TRUE(failsWith(result, "altered output", "round 5 visit 0"));
}

TEST_F(AuditMutationTest, AlteredFileHash) {
  writeText(dir() / "chart.svg", readText(dir() / "chart.svg") + "<!-- -->");
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "altered file hash", "chart.svg"));
}

TEST_F(AuditMutationTest, SampleThatIsNotANumber) {
  auto result = auditAfter([&](json &b) { visit(b, 2, 2)["samples_s"][3] = "0.0012"; });
  EXPECT_TRUE(failsWith(result, "not a number", "samples_s[3]"));
}

TEST_F(AuditMutationTest, SampleThatIsNull) {
  // A writer that serialises NaN with nlohmann-json produces null.
  auto result = auditAfter([&](json &b) { visit(b, 0, 1)["samples_s"][0] = nullptr; });
  EXPECT_TRUE(failsWith(result, "not a number", "samples_s[0]"));
}

TEST_F(AuditMutationTest, MissingFile) {
  fs::remove(dir() / "inputs" / kCaseId / "gamma.npy");
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "missing file",
                        "gamma.npy: is listed in files but not in the bundle"));
}

TEST_F(AuditMutationTest, UnlistedFile) {
  writeText(dir() / "outputs" / kCaseId / "extra.npy", "not listed");
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "unlisted file", "extra.npy"));
}

TEST_F(AuditMutationTest, InputWithTheWrongShape) {
  std::string gamma = std::string("inputs/") + kCaseId + "/gamma.npy";
  npy::Array g = npy::read((dir() / gamma).string());
  g.shape = {1, 33};
  npy::write((dir() / gamma).string(), g);
  rehash(dir(), gamma);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "wrong shape", "gamma': shape [1, 33]"));
}

TEST_F(AuditMutationTest, InputAlteredWithConsistentHash) {
  // The outputs no longer follow from the inputs: the oracle must notice.
  std::string x = std::string("inputs/") + kCaseId + "/x.npy";
  npy::Array a = npy::read((dir() / x).string());
  a.data[5] += 1.0f;
  npy::write((dir() / x).string(), a);
  rehash(dir(), x);
  EXPECT_TRUE(failsWith(audit::auditBundle(dir()), "wrong oracle", "oracle_failures"));
}

TEST_F(AuditMutationTest, BandwidthNotFromItsSamples) {
  // A faster copy rate, with min_time_s and ratio kept consistent with it:
  // only the raw samples can tell.
  auto result = auditAfter([&](json &b) {
    json &roof = theCase(b)["summary"]["roofline"];
    double copy = roof["copy_bytes_per_s"].get<double>() * 1.5;
    roof["copy_bytes_per_s"] = copy;
    double bytes = roof["bytes"].get<double>();
    double old_min = roof["min_time_s"].get<double>();
    roof["min_time_s"] = bytes / copy;
    roof["ratio"] = roof["ratio"].get<double>() * old_min / (bytes / copy);
  });
  EXPECT_TRUE(failsWith(result, "wrong roofline", "copy_bytes_per_s is"));
}

TEST_F(AuditMutationTest, DroppedClaimThatTheOptionsOblige) {
  // The spec-off variant must claim it has no specialized body.
  auto result = auditAfter([&](json &b) {
    json &claims = theCase(b)["variants"][1]["claims"];
    claims.erase(claims.begin() + 1);
  });
  EXPECT_TRUE(failsWith(result, "failed check", "specialized_bodies == 0, which is missing"));
}

TEST_F(AuditMutationTest, SeedProtocolWithOtherSettings) {
  auto result = auditAfter([&](json &b) {
    b["protocol"]["name"] = "seed"; // the test bundle ran shorter settings
  });
  EXPECT_TRUE(failsWith(result, "malformed", "protocol 'seed' must be"));
}

TEST_F(AuditMutationTest, ClaimThatDoesNotHold) {
  auto result =
      auditAfter([&](json &b) { theCase(b)["variants"][0]["claims"][1]["observed"] = 0; });
  EXPECT_TRUE(failsWith(result, "failed check", "specialized_bodies > 0"));
}

TEST_F(AuditMutationTest, ClaimWhoseObservedValueIsNotTheCompilers) {
  // Before: a lanes claim rewritten so that it still holds as recorded, but
  // with a lane count no compile gives.
  auto result = auditAfter([&](json &b) {
    json &claim = theCase(b)["variants"][0]["claims"][0];
    claim["value"] = claim["observed"].get<int>() * 2;
    claim["observed"] = claim["value"];
  });
  EXPECT_TRUE(failsWith(result, "failed check", "compiling the saved program"));
}

TEST_F(AuditMutationTest, RooflineBytesOverstated) {
  // Before: bytes doubled with min_time_s and ratio re-derived from it, so
  // only re-counting the bytes can tell.
  auto result = auditAfter([&](json &b) {
    json &roof = theCase(b)["summary"]["roofline"];
    roof["bytes"] = roof["bytes"].get<double>() * 2;
    roof["min_time_s"] = roof["min_time_s"].get<double>() * 2;
    roof["ratio"] = roof["ratio"].get<double>() / 2;
  });
  EXPECT_TRUE(failsWith(result, "wrong roofline", "bytes is"));
}

// Flips one low bit of spec_off's output (still within the oracle) and
// re-records every hash of it.
audit::AuditResult flipSpecOffBit(AuditMutationTest &test, const fs::path &dir);

TEST_F(AuditMutationTest, LanejitVariantsThatDifferInBits) {
  // Before: spec_off's visits claim bits_match_default, but its output now
  // differs from spec_on's in one bit, every hash re-recorded.
  audit::AuditResult result = flipSpecOffBit(*this, dir());
  EXPECT_TRUE(failsWith(result, "altered output", "bits_match_default is true"));
}

TEST_F(AuditMutationTest, BitsMatchDefaultFalse) {
  auto result =
      auditAfter([&](json &b) { visit(b, 2, 0)["checks"]["bits_match_default"] = false; });
  EXPECT_TRUE(failsWith(result, "failed check", "bits_match_default is false"));
}

TEST_F(AuditMutationTest, PathOutsideTheBundle) {
  auto result = auditAfter([&](json &b) { theCase(b)["program_file"] = "../escape.lj"; });
  EXPECT_TRUE(failsWith(result, "malformed", "../escape.lj"));
}

audit::AuditResult flipSpecOffBit(AuditMutationTest &test, const fs::path &dir) {
  std::string file = std::string("outputs/") + kCaseId + "/spec_off.npy";
  npy::Array y = npy::read((dir / file).string());
  uint32_t bits;
  std::memcpy(&bits, &y.data[3], 4);
  bits ^= 1;
  std::memcpy(&y.data[3], &bits, 4);
  npy::write((dir / file).string(), y);
  rehash(dir, file);
  std::string payload(reinterpret_cast<const char *>(y.data.data()), y.data.size() * 4);
  return test.auditAfter([&](json &b) {
    for (json &round : b["cases"][0]["rounds"])
      for (json &v : round["visits"])
        if (v["variant"] == "spec_off")
          v["checks"]["output_sha256"] = sha256(payload);
  });
}

} // namespace
} // namespace lanejit::audit_test
