// A short bench run (tiny warmup and target, small cases) start to finish:
// the bundle it writes (16-bit and int8 cases, programs of two outputs),
// and — when the audit is built — that the audit passes it and catches
// tampering. A peer that computes garbage must fail the run, not be
// averaged away.
#include "io/sha256.h"
#include "runner.h"
#include "support/command_line.h"

#include <lanejit/element_types.h>
#include <lanejit/error.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#ifdef LANEJIT_HAVE_AUDIT
#include "audit.h"
#endif

namespace lanejit::bench {
namespace {
namespace fs = std::filesystem;

ProtocolSettings tinyProtocol() {
  return {"custom", 0.001, 0.0002, int64_t{1} << 20, 3};
}

fs::path freshDir(const std::string &name) {
  fs::path dir = fs::temp_directory_path() /
                 (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                  "-" + std::to_string(reinterpret_cast<uintptr_t>(&name) & 0xffff));
  fs::remove_all(dir);
  return dir;
}

nlohmann::json readJson(const fs::path &path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The runtime's SHA-256 (LLVM's), independent of the bench's (OpenSSL's).
std::string fileSha256(const fs::path &path) {
  std::string bytes = test::slurp(path);
  return io::sha256Hex(bytes.data(), bytes.size());
}

// A peer that leaves the output as it found it (NaN) and scribbles over the
// sentinel zone just past the output: every check it can fail, it fails.
class BrokenPeer : public Peer {
  struct Prepared : PreparedPeer {
    float *after_output;
    void call() override { *after_output = 1.0f; }
  };

public:
  std::string name() const override { return "broken"; }
  std::string description() const override { return "writes past its output"; }
  bool supports(const std::string &op) const override { return op == "swiglu"; }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    auto p = std::make_unique<Prepared>();
    p->after_output = static_cast<float *>(b.outputs[0]) + b.rows * b.cols;
    return p;
  }
};

TEST(BenchEndToEnd, TheAotLinkedEntryGivesTheJitsBits) {
  // The AOT variant runs the object the JIT linked, loaded through the
  // system linker: every visit must pass and match the default's bits.
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("gelu_residual:3x37")};
  options.only = {"lanejit", "lanejit-aot"};
  options.aot = true;
  options.out_dir = freshDir("bench-e2e-aot");
  options.progress = false;
  BenchResult result = runBench(options);
  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 1u);
  const CaseRecord &c = result.record.cases[0];
  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(c.variants[1].name, "lanejit-aot");
  for (const RoundRecord &round : c.rounds)
    for (const VisitRecord &v : round.visits) {
      EXPECT_TRUE(v.ok()) << v.variant << ": " << v.status;
      ASSERT_TRUE(v.checks.bits_match_default.has_value());
      EXPECT_TRUE(*v.checks.bits_match_default) << v.variant;
    }
}

TEST(BenchEndToEnd, ATinyRunWritesACompleteBundle) {
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("rope:5x34"), libraryCase("layernorm:4x33")};
  options.only = {"lanejit", "lanejit-nospec", "naive"};
  options.out_dir = freshDir("bench-e2e");
  options.progress = false;

  BenchResult result = runBench(options);

  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 2u);
  for (const CaseRecord &c : result.record.cases) {
    ASSERT_EQ(c.variants.size(), 3u) << c.id;
    std::set<std::vector<std::string>> orders;
    for (const RoundRecord &round : c.rounds) {
      orders.insert(round.order);
      ASSERT_EQ(round.visits.size(), 3u);
      for (const VisitRecord &v : round.visits) {
        EXPECT_TRUE(v.ok()) << c.id << " " << v.variant << ": " << v.status;
        EXPECT_EQ(v.timing.samples_s.size(), 3u);
        EXPECT_TRUE(std::isfinite(v.timing.value_s) && v.timing.value_s > 0);
        bool lanejit = v.variant.rfind("lanejit", 0) == 0;
        EXPECT_EQ(v.checks.bits_match_default.has_value(), lanejit) << v.variant;
        EXPECT_EQ(v.checks.report_matches_claims.has_value(), lanejit) << v.variant;
        if (lanejit) {
          EXPECT_TRUE(*v.checks.bits_match_default && *v.checks.report_matches_claims);
        }
      }
    }
    EXPECT_EQ(orders.size(), 6u) << c.id << ": three variants, every order once";
    EXPECT_EQ(c.time_s.size(), 3u);
    EXPECT_EQ(c.ratios.size(), 3u); // lanejit/nospec, lanejit/naive, nospec/naive
    // Compiled in fresh processes: the second one found the first's kernel
    // in the persistent cache.
    ASSERT_TRUE(c.compile_times.has_value()) << c.id;
    EXPECT_GT(c.compile_times->cold_ms, 0);
    EXPECT_GT(c.compile_times->warm_ms, 0);
    EXPECT_GT(c.compile_times->cached_ms, 0);
    EXPECT_TRUE(c.compile_times->cached_from_disk) << c.id;
  }

  nlohmann::json bundle = readJson(result.bundle_dir / "bundle.json");
  EXPECT_EQ(bundle["format"], "lanejit-bench/1");
  EXPECT_EQ(bundle["status"], "pass");
  EXPECT_EQ(bundle["cases"].size(), 2u);
  for (const char *file :
       {"report.md", "chart.svg", "programs/rope-5x34.lj", "inputs/rope-5x34/cos.npy",
        "outputs/layernorm-4x33/naive.npy", "outputs/layernorm-4x33/lanejit-nospec.npy"}) {
    ASSERT_TRUE(bundle["files"].contains(file)) << file;
    EXPECT_EQ(bundle["files"][file], fileSha256(result.bundle_dir / file)) << file;
  }
  std::ifstream report(result.bundle_dir / "report.md");
  std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| rope-5x34 |"), std::string::npos);
  EXPECT_NE(text.find("NOT a confidence interval"), std::string::npos);

#ifdef LANEJIT_HAVE_AUDIT
  audit::AuditResult audited = audit::auditBundle(result.bundle_dir);
  for (const std::string &failure : audited.failures)
    ADD_FAILURE() << "audit: " << failure;
  EXPECT_TRUE(audited.pass());
  // A compile time in report.md that is not the bundle's fails the audit
  // (the file's hash re-recorded, so only the report check can catch it).
  nlohmann::json edited = bundle;
  edited["cases"][0]["summary"]["compile_ms"]["warm"] = 123456.0;
  std::ofstream(result.bundle_dir / "bundle.json") << edited.dump(1);
  audited = audit::auditBundle(result.bundle_dir);
  bool caught = false;
  for (const std::string &failure : audited.failures)
    caught = caught || failure.find("warm compile ms") != std::string::npos;
  EXPECT_TRUE(caught) << "the audit did not compare report.md's compile times with the bundle";
#endif
  fs::remove_all(result.bundle_dir);
}

TEST(BenchEndToEnd, SixteenBitCasesAreMeasuredCheckedAndAudited) {
  // bf16 and f16 cases with every variant that runs them: 16-bit files in
  // the bundle, the roofline at 2 bytes an element, the audit passing; then
  // a tampered bf16 output and a wrong dtype are caught.
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("rmsnorm:3x37:bf16"), libraryCase("swiglu:4x20:f16")};
  // The 16-bit peers this binary has (no torch under the sanitizers, no
  // avx512 off AVX-512 machines), and naive, which must leave itself out.
  options.only = {"lanejit", "lanejit-nospec", "naive"};
  for (const std::unique_ptr<Peer> &peer : availablePeers())
    if (peer->name() == "avx512" || peer->name() == "torch")
      options.only.push_back(peer->name());
  options.out_dir = freshDir("bench-e2e-half");
  options.progress = false;
  BenchResult result = runBench(options);
  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 2u);
  EXPECT_EQ(result.record.cases[0].dtype, "bf16");
  EXPECT_EQ(result.record.cases[1].dtype, "f16");
  for (const CaseRecord &c : result.record.cases) {
    for (const VariantRecord &v : c.variants)
      EXPECT_NE(v.name, "naive") << c.id << ": naive loops are f32 only";
    for (const RoundRecord &round : c.rounds)
      for (const VisitRecord &v : round.visits)
        EXPECT_TRUE(v.ok()) << c.id << " " << v.variant << ": " << v.status;
  }
  nlohmann::json bundle = readJson(result.bundle_dir / "bundle.json");
  EXPECT_EQ(bundle["cases"][0]["id"], "rmsnorm-bf16-3x37");
  EXPECT_EQ(bundle["cases"][0]["dtype"], "bf16");
  // The arrays are 16-bit .npy files: bf16 as np.save writes ml_dtypes'.
  std::string x = test::slurp(result.bundle_dir / "inputs/rmsnorm-bf16-3x37/x.npy");
  EXPECT_NE(x.find("'descr': '<V2'"), std::string::npos);
  std::string y = test::slurp(result.bundle_dir / "outputs/swiglu-f16-4x20/lanejit.npy");
  EXPECT_NE(y.find("'descr': '<f2'"), std::string::npos);
#ifdef LANEJIT_HAVE_AUDIT
  audit::AuditResult audited = audit::auditBundle(result.bundle_dir);
  for (const std::string &failure : audited.failures)
    ADD_FAILURE() << "audit: " << failure;
  EXPECT_TRUE(audited.pass());
  // One bf16 output element moved by 4 units in its last place (its file's
  // hash re-recorded): the saved output's hash and the oracle both object.
  fs::path out = result.bundle_dir / "outputs/rmsnorm-bf16-3x37/lanejit.npy";
  std::string bytes = test::slurp(out);
  bytes[bytes.size() - 2] = static_cast<char>(bytes[bytes.size() - 2] + 4);
  std::ofstream(out, std::ios::binary) << bytes;
  nlohmann::json edited = bundle;
  edited["files"]["outputs/rmsnorm-bf16-3x37/lanejit.npy"] = fileSha256(out);
  edited["cases"][1]["dtype"] = "bf16"; // the f16 case called bf16
  std::ofstream(result.bundle_dir / "bundle.json") << edited.dump(1);
  audited = audit::auditBundle(result.bundle_dir);
  bool hash = false, oracle = false, dtype = false;
  for (const std::string &failure : audited.failures) {
    hash = hash || failure.find("output_sha256") != std::string::npos;
    oracle = oracle || failure.find("fails the FP64 oracle") != std::string::npos;
    dtype = dtype || failure.find("dtype is 'bf16'") != std::string::npos;
  }
  EXPECT_TRUE(hash && oracle && dtype) << "hash " << hash << " oracle " << oracle << " dtype "
                                       << dtype;
#endif
  fs::remove_all(result.bundle_dir);
}

#ifdef LANEJIT_HAVE_AUDIT
// The audit's failures after `edit` changed a copy of the bundle at `dir`.
std::vector<std::string> auditCopy(const fs::path &dir, const std::string &name,
                                   const std::function<void(const fs::path &)> &edit) {
  fs::path copy = dir.parent_path() / (dir.filename().string() + "-" + name);
  fs::remove_all(copy);
  fs::copy(dir, copy, fs::copy_options::recursive);
  edit(copy);
  std::vector<std::string> failures = audit::auditBundle(copy).failures;
  fs::remove_all(copy);
  return failures;
}

bool mentions(const std::vector<std::string> &failures, const std::string &text) {
  for (const std::string &failure : failures)
    if (failure.find(text) != std::string::npos)
      return true;
  return false;
}

// Rewrites one byte of a saved array (its payload ends the file) and records
// the file's new hash, so only the hash of the visit and the oracle object.
void editArray(const fs::path &dir, const std::string &file,
               const std::function<void(std::string &)> &edit) {
  std::string bytes = test::slurp(dir / file);
  edit(bytes);
  std::ofstream(dir / file, std::ios::binary) << bytes;
  nlohmann::json bundle = readJson(dir / "bundle.json");
  bundle["files"][file] = fileSha256(dir / file);
  std::ofstream(dir / "bundle.json") << bundle.dump(1);
}
#endif

TEST(BenchEndToEnd, Int8CasesAreMeasuredCheckedAndAudited) {
  // RMSNorm -> int8 (two outputs: q i8 [R,C], scale f32 [R,1]) with f32 and
  // bf16 inputs: every output checked and saved, the unfused pair giving the
  // fused kernel's bits, the audit passing; then a q moved by two steps, a
  // q moved by one (within the oracle's step, but not its hash), a scale off
  // by 1% and a dropped output file are each caught.
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("rmsnorm_q8:3x37"), libraryCase("rmsnorm_q8:4x40:bf16")};
  options.only = {"lanejit", "lanejit-nospec", "naive", "unfused-pair"};
  for (const std::unique_ptr<Peer> &peer : availablePeers())
    if (peer->name() == "torch")
      options.only.push_back(peer->name());
  options.out_dir = freshDir("bench-e2e-int8");
  options.progress = false;
  BenchResult result = runBench(options);
  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 2u);
  EXPECT_EQ(result.record.cases[0].dtype, "f32");
  EXPECT_EQ(result.record.cases[1].dtype, "bf16");
  for (const CaseRecord &c : result.record.cases) {
    std::map<std::string, std::string> sha;
    for (const RoundRecord &round : c.rounds)
      for (const VisitRecord &v : round.visits) {
        EXPECT_TRUE(v.ok()) << c.id << " " << v.variant << ": " << v.status;
        sha[v.variant] = v.checks.output_sha256;
      }
    ASSERT_TRUE(sha.count("unfused-pair")) << c.id;
    EXPECT_EQ(sha["unfused-pair"], sha["lanejit"]) << c.id << ": the pair's bits are the fused";
    EXPECT_EQ(sha.count("naive"), c.dtype == "f32" ? 1u : 0u) << c.id;
    ASSERT_FALSE(c.variants.empty());
    ASSERT_EQ(c.variants[0].output_files.size(), 2u) << c.id;
    EXPECT_EQ(c.variants[0].output_file, c.variants[0].output_files[0].file);
  }
  nlohmann::json bundle = readJson(result.bundle_dir / "bundle.json");
  EXPECT_EQ(bundle["cases"][1]["id"], "rmsnorm_q8-bf16-4x40");
  const nlohmann::json &files = bundle["cases"][0]["variants"][0]["output_files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["name"], "q");
  EXPECT_EQ(files[0]["file"], "outputs/rmsnorm_q8-3x37/lanejit/q.npy");
  EXPECT_EQ(files[1]["file"], "outputs/rmsnorm_q8-3x37/lanejit/scale.npy");
  // q as np.save writes int8, scale as float32 [R, 1].
  std::string q = test::slurp(result.bundle_dir / "outputs/rmsnorm_q8-3x37/lanejit/q.npy");
  EXPECT_NE(q.find("'descr': '|i1'"), std::string::npos);
  std::string scale =
      test::slurp(result.bundle_dir / "outputs/rmsnorm_q8-bf16-4x40/unfused-pair/scale.npy");
  EXPECT_NE(scale.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(scale.find("'shape': (4, 1)"), std::string::npos);
#ifdef LANEJIT_HAVE_AUDIT
  audit::AuditResult audited = audit::auditBundle(result.bundle_dir);
  for (const std::string &failure : audited.failures)
    ADD_FAILURE() << "audit: " << failure;
  EXPECT_TRUE(audited.pass());
  const std::string q_file = "outputs/rmsnorm_q8-3x37/lanejit/q.npy";
  auto moveLastQ = [&](int steps) {
    return [&, steps](const fs::path &dir) {
      editArray(dir, q_file, [steps](std::string &bytes) {
        int8_t v = static_cast<int8_t>(bytes.back());
        bytes.back() = static_cast<char>(v > 0 ? v - steps : v + steps);
      });
    };
  };
  std::vector<std::string> two = auditCopy(result.bundle_dir, "q2", moveLastQ(2));
  EXPECT_TRUE(mentions(two, "fails the FP64 oracle") && mentions(two, "q[2,36]"))
      << "a q two steps off was not caught by the oracle";
  EXPECT_TRUE(mentions(two, "output_sha256"));
  std::vector<std::string> one = auditCopy(result.bundle_dir, "q1", moveLastQ(1));
  EXPECT_FALSE(mentions(one, "fails the FP64 oracle")) << "one step is the oracle's allowance";
  EXPECT_TRUE(mentions(one, "output_sha256")) << "a q one step off kept its recorded hash";
  std::vector<std::string> scaled =
      auditCopy(result.bundle_dir, "scale", [](const fs::path &dir) {
        editArray(dir, "outputs/rmsnorm_q8-bf16-4x40/lanejit/scale.npy", [](std::string &b) {
          float v;
          std::memcpy(&v, b.data() + b.size() - 4, 4);
          v *= 1.01f; // atol = 5e-5 is 0.2% of a scale near 0.025
          std::memcpy(b.data() + b.size() - 4, &v, 4);
        });
      });
  EXPECT_TRUE(mentions(scaled, "fails the FP64 oracle") && mentions(scaled, "scale[3,0]"))
      << "a scale off by 1% was not caught";
  std::vector<std::string> dropped =
      auditCopy(result.bundle_dir, "dropped", [](const fs::path &dir) {
        nlohmann::json b = readJson(dir / "bundle.json");
        b["cases"][0]["variants"][1].erase("output_files");
        std::ofstream(dir / "bundle.json") << b.dump(1);
      });
  EXPECT_TRUE(mentions(dropped, "output_files is missing"));
#endif
  fs::remove_all(result.bundle_dir);
}

TEST(BenchEndToEnd, Q8_0CasesAreMeasuredCheckedAndAudited) {
  // RMSNorm -> Q8_0 (q i8 [R,C], scale f16 [R,C/32]) with f32 and bf16
  // inputs: every output checked and saved (the scale as float16), the
  // unfused pair giving the fused kernel's bits, the audit passing; then a
  // q moved by two steps, a scale moved by one f16 step (within the
  // oracle's tolerance, but not its hash) and scales off by 1%, lanejit's
  // and a peer's (no peer allowance for a quantizing program), are caught.
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("rmsnorm_q8_0:3x64"), libraryCase("rmsnorm_q8_0:4x96:bf16")};
  options.only = {"lanejit", "lanejit-nospec", "naive", "unfused-pair"};
  for (const std::unique_ptr<Peer> &peer : availablePeers())
    if (peer->name() == "torch")
      options.only.push_back(peer->name());
  options.out_dir = freshDir("bench-e2e-q8_0");
  options.progress = false;
  BenchResult result = runBench(options);
  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 2u);
  EXPECT_EQ(result.record.cases[1].dtype, "bf16");
  for (const CaseRecord &c : result.record.cases) {
    std::map<std::string, std::string> sha;
    for (const RoundRecord &round : c.rounds)
      for (const VisitRecord &v : round.visits) {
        EXPECT_TRUE(v.ok()) << c.id << " " << v.variant << ": " << v.status;
        sha[v.variant] = v.checks.output_sha256;
      }
    ASSERT_TRUE(sha.count("unfused-pair")) << c.id;
    EXPECT_EQ(sha["unfused-pair"], sha["lanejit"]) << c.id << ": the pair's bits are the fused";
    EXPECT_EQ(sha.count("naive"), c.dtype == "f32" ? 1u : 0u) << c.id;
    ASSERT_FALSE(c.variants.empty());
    ASSERT_EQ(c.variants[0].output_files.size(), 2u) << c.id;
  }
  // The scale as np.save writes float16, one per 32 columns.
  std::string scale =
      test::slurp(result.bundle_dir / "outputs/rmsnorm_q8_0-3x64/lanejit/scale.npy");
  EXPECT_NE(scale.find("'descr': '<f2'"), std::string::npos);
  EXPECT_NE(scale.find("'shape': (3, 2)"), std::string::npos);
  EXPECT_FALSE(fs::exists(result.bundle_dir / "outputs/rmsnorm_q8_0-bf16-4x96/naive"))
      << "naive runs f32 cases only";
#ifdef LANEJIT_HAVE_AUDIT
  audit::AuditResult audited = audit::auditBundle(result.bundle_dir);
  for (const std::string &failure : audited.failures)
    ADD_FAILURE() << "audit: " << failure;
  EXPECT_TRUE(audited.pass());
  std::vector<std::string> two =
      auditCopy(result.bundle_dir, "q2", [](const fs::path &dir) {
        editArray(dir, "outputs/rmsnorm_q8_0-3x64/lanejit/q.npy", [](std::string &bytes) {
          int8_t v = static_cast<int8_t>(bytes.back());
          bytes.back() = static_cast<char>(v > 0 ? v - 2 : v + 2);
        });
      });
  EXPECT_TRUE(mentions(two, "fails the FP64 oracle") && mentions(two, "q[2,63]"))
      << "a q two steps off was not caught by the oracle";
  // The last f16 scale of a file, scaled by `factor` or moved by `steps`.
  auto editScale = [](const std::string &file, float factor, int steps) {
    return [file, factor, steps](const fs::path &dir) {
      editArray(dir, file, [factor, steps](std::string &b) {
        uint16_t bits;
        std::memcpy(&bits, b.data() + b.size() - 2, 2);
        bits = factor != 1 ? roundToF16(widenF16(bits) * factor)
                           : static_cast<uint16_t>(bits + steps);
        std::memcpy(b.data() + b.size() - 2, &bits, 2);
      });
    };
  };
  const std::string bf16_scale = "outputs/rmsnorm_q8_0-bf16-4x96/lanejit/scale.npy";
  std::vector<std::string> step = auditCopy(result.bundle_dir, "s1", editScale(bf16_scale, 1, 1));
  EXPECT_FALSE(mentions(step, "fails the FP64 oracle")) << "one f16 step is the allowance";
  EXPECT_TRUE(mentions(step, "output_sha256")) << "a scale one step off kept its hash";
  std::vector<std::string> off =
      auditCopy(result.bundle_dir, "s100", editScale(bf16_scale, 1.01f, 0));
  EXPECT_TRUE(mentions(off, "fails the FP64 oracle") && mentions(off, "scale[3,2]"))
      << "a scale off by 1% was not caught";
  // A peer's scale is held to the same rule (2^-8 would let 1% through).
  std::vector<std::string> peer_off = auditCopy(
      result.bundle_dir, "peer-s100",
      editScale("outputs/rmsnorm_q8_0-3x64/unfused-pair/scale.npy", 1.01f, 0));
  EXPECT_TRUE(mentions(peer_off, "fails the FP64 oracle") &&
              mentions(peer_off, "variant 'unfused-pair'"))
      << "a peer's scale off by 1% was not caught";
#endif
  fs::remove_all(result.bundle_dir);
}

TEST(BenchEndToEnd, AFailedCheckFailsTheRunAndIsRecorded) {
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("swiglu:3x20")};
  options.only = {"lanejit", "broken"};
  options.out_dir = freshDir("bench-e2e-broken");
  options.progress = false;
  options.print_table = false;
  options.make_peers = [] {
    std::vector<std::unique_ptr<Peer>> peers;
    peers.push_back(std::make_unique<BrokenPeer>());
    return peers;
  };

  int exit_code = benchCommand(options);

  EXPECT_EQ(exit_code, 1);
  nlohmann::json bundle = readJson(options.out_dir / "bundle.json");
  EXPECT_EQ(bundle["status"], "fail");
  // Rounds: [lanejit, broken], [broken, lanejit]. lanejit's first visit is
  // clean; its second finds the guard the broken peer damaged and says so.
  const auto &rounds = bundle["cases"][0]["rounds"];
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0]["visits"][0]["variant"], "lanejit");
  EXPECT_EQ(rounds[0]["visits"][0]["status"], "ok");
  EXPECT_NE(rounds[1]["visits"][1]["status"].get<std::string>().find("before this visit"),
            std::string::npos);
  int broken_visits = 0;
  for (const auto &round : rounds) {
    for (const auto &visit : round["visits"]) {
      if (visit["variant"] != "broken")
        continue;
      ++broken_visits;
      EXPECT_NE(visit["status"].get<std::string>().find("failed:"), std::string::npos);
      EXPECT_EQ(visit["checks"]["oracle_failures"], 60);
      EXPECT_EQ(visit["checks"]["guards_intact"], false);
    }
  }
  EXPECT_EQ(broken_visits, 2); // both rounds recorded, neither dropped
  std::ifstream report(options.out_dir / "report.md");
  std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("FAILED (3 visits)"), std::string::npos);
#ifdef LANEJIT_HAVE_AUDIT
  EXPECT_FALSE(audit::auditBundle(options.out_dir).pass());
#endif
  fs::remove_all(options.out_dir);
}

// A peer that cannot run: the run stops with an error after the case's
// program and inputs were written.
class ThrowingPeer : public Peer {
public:
  std::string name() const override { return "throwing"; }
  std::string description() const override { return "throws when prepared"; }
  bool supports(const std::string &op) const override { return true; }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &) const override {
    throw Error(Error::Kind::Bind, "throwing peer");
  }
};

TEST(BenchEndToEnd, ARunThatFailsPartWayLeavesNoBundle) {
  BenchOptions options;
  options.protocol = tinyProtocol();
  options.cases = {libraryCase("swiglu:3x20")};
  options.only = {"lanejit", "throwing"};
  options.out_dir = freshDir("bench-e2e-throws");
  options.progress = false;
  options.make_peers = [] {
    std::vector<std::unique_ptr<Peer>> peers;
    peers.push_back(std::make_unique<ThrowingPeer>());
    return peers;
  };
  EXPECT_THROW(runBench(options), Error);
  EXPECT_FALSE(fs::exists(options.out_dir));
  // Nor its hidden staging directory beside it.
  std::string stem = "." + options.out_dir.filename().string() + ".";
  for (const fs::directory_entry &e : fs::directory_iterator(options.out_dir.parent_path()))
    EXPECT_NE(e.path().filename().string().rfind(stem, 0), 0u) << e.path();
}

} // namespace
} // namespace lanejit::bench
