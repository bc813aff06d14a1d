// The `inductor` peer (bench/peers/inductor_peer.cpp): TorchInductor's own
// kernels, built once per run by inductor_kernels.py and called from the
// bench's timer. Each operator at tail-heavy shapes matches the FP64 oracle
// (one and two threads; rmsnorm_q8's and rmsnorm_q8_0's two outputs with
// f32 and bf16 inputs); in a bench run its rows are audited like any other, and
// tampering with its samples, output or shared objects is caught; a peer
// that cannot build is skipped, not a failed run.
#include "bench/peer_cases.h"
#include "peers/peer_factories.h"
#include "runner.h"

#include <lanejit/check.h>
#include <lanejit/library.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#ifdef LANEJIT_HAVE_AUDIT
#include "audit.h"
#include "checks.h" // the audit's SHA-256, to re-record a file's hash
#endif

namespace lanejit::bench {
namespace {
namespace fs = std::filesystem;

std::unique_ptr<Peer> inductorOrSkipReason(std::string &why) {
#ifdef LANEJIT_PEER_INDUCTOR
  if (std::unique_ptr<Peer> peer = makeInductorPeer())
    return peer;
  why = "the inductor peer's Python or script is missing";
#else
  why = "the inductor peer is not built here (no torch in the build's Python)";
#endif
  return nullptr;
}

// The case's output after two calls (NaN in between), or a failure naming
// what differs from the oracle or changed.
::testing::AssertionResult matchesOracle(const Peer &peer, const std::string &op, Shape shape) {
  std::string where = peer.name() + " " + op + " " + std::to_string(shape.rows) + "x" +
                      std::to_string(shape.cols) + ": ";
  check::Case c = check::makeCase(library::byName(op), shape, check::Fill::Random, /*seed=*/7);
  std::vector<uint64_t> hashes;
  for (const check::GuardedBuffer &in : c.inputs)
    hashes.push_back(in.hash());
  std::unique_ptr<PreparedPeer> prepared = peer.prepare(buffersOf(op, c));
  for (int visit = 0; visit < 2; ++visit) {
    c.outputs[0].fill(std::nanf(""));
    prepared->call();
    check::Comparison cmp = check::compareWithReference(c);
    if (!cmp.ok())
      return ::testing::AssertionFailure() << where << cmp.failures << " wrong, "
                                           << cmp.first_failure;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.inputs[i].hash() != hashes[i] || !c.inputs[i].guardsIntact())
        return ::testing::AssertionFailure() << where << "input " << i << " changed";
    if (!c.outputs[0].guardsIntact())
      return ::testing::AssertionFailure() << where << "output guard zone damaged";
  }
  if (prepared->details().find("kernels in graph order: cpp_fused") == std::string::npos)
    return ::testing::AssertionFailure() << where << "details name no kernel: "
                                         << prepared->details();
  return ::testing::AssertionSuccess();
}

Shape shapeFor(const std::string &op, Shape s) {
  return op == "rope" ? Shape{s.rows, s.cols + 1} : s; // RoPE: even C
}

TEST(InductorPeer, EveryOperatorMatchesTheOracleAtTailShapes) {
  std::string why;
  std::unique_ptr<Peer> peer = inductorOrSkipReason(why);
  if (!peer)
    GTEST_SKIP() << why;
  // Before: 17x65 (the seed's), 3x33 (two packets and a lane), 40x17 (the
  // softmax mask wraps, r mod C), all built in one child process.
  const Shape shapes[] = {{17, 65}, {3, 33}, {40, 17}};
  RunPlan plan;
  for (const library::Entry &e : library::all())
    if (peer->supports(e.name))
      for (Shape s : shapes)
        plan.cases.push_back({e.name, shapeFor(e.name, s).rows, shapeFor(e.name, s).cols});
  ASSERT_EQ(plan.cases.size(), 18u);
  peer->anticipate(plan); // dir empty: a temporary directory
  // Action + Expected.
  for (const RunPlan::Case &c : plan.cases)
    EXPECT_TRUE(matchesOracle(*peer, c.op, {c.rows, c.cols}));
}

TEST(InductorPeer, ItsTwoThreadKernelsMatchTheOracle) {
  std::string why;
  std::unique_ptr<Peer> peer = inductorOrSkipReason(why);
  if (!peer)
    GTEST_SKIP() << why;
  // Before: Inductor's kernels generated for two OpenMP threads, at shapes
  // large enough that it splits rows.
  std::unique_ptr<Peer> two = peer->withThreads(2);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->name(), "inductor-t2");
  // Action + Expected.
  EXPECT_TRUE(matchesOracle(*two, "masked_softmax", {129, 768}));
  EXPECT_TRUE(matchesOracle(*two, "layernorm", {129, 768}));
}

// A quantizing operator's two outputs (q int8 and its scales) at `shapes`,
// with f32 and bf16 inputs, all built in one child process.
void expectQuantizingMatchesTheOracle(Peer &peer, const std::string &op, Program (*make)(),
                                      std::initializer_list<Shape> shapes) {
  RunPlan plan;
  for (const char *type : {"f32", "bf16"})
    for (Shape s : shapes)
      plan.cases.push_back({op, s.rows, s.cols, type});
  peer.anticipate(plan);
  for (const RunPlan::Case &pc : plan.cases) {
    std::string where = op + " " + pc.dtype + " " + std::to_string(pc.rows) + "x" +
                        std::to_string(pc.cols) + ": ";
    Program program = make();
    if (pc.dtype == "bf16") {
      program = withStorage(program, DType::BF16);
      program.outputs = make().outputs;
    }
    check::Case c =
        check::makeCase(program, {pc.rows, pc.cols}, check::Fill::Random, /*seed=*/7);
    std::unique_ptr<PreparedPeer> prepared = peer.prepare(buffersOf(op, c));
    // Action: -128 (no quantized value) in q, NaN in the scales, then a call.
    std::memset(c.outputs[0].raw(), 0x80, static_cast<size_t>(c.outputs[0].bytes()));
    c.outputs[1].fill(std::nanf(""));
    prepared->call();
    // Expected: q within one step, the scales at lanejit's tolerance (an f16
    // scale within one f16 step, no peer allowance), guards intact.
    check::Comparison cmp = check::compareWithReference(c);
    EXPECT_TRUE(cmp.ok()) << where << cmp.failures << " wrong, " << cmp.first_failure;
    for (const check::GuardedBuffer &out : c.outputs)
      EXPECT_TRUE(out.guardsIntact()) << where;
    EXPECT_NE(prepared->details().find("cpp_fused"), std::string::npos) << where;
  }
}

TEST(InductorPeer, RmsnormQ8MatchesTheOracleWithF32AndBf16Inputs) {
  std::string why;
  std::unique_ptr<Peer> peer = inductorOrSkipReason(why);
  if (!peer)
    GTEST_SKIP() << why;
  // q int8, scale f32 [R, 1]: at a tail-heavy and the seed's small shape.
  expectQuantizingMatchesTheOracle(*peer, "rmsnorm_q8", &library::rmsNormQ8, {{3, 33}, {17, 65}});
}

TEST(InductorPeer, RmsnormQ8_0MatchesTheOracleWithF32AndBf16Inputs) {
  std::string why;
  std::unique_ptr<Peer> peer = inductorOrSkipReason(why);
  if (!peer)
    GTEST_SKIP() << why;
  // q int8, scale f16 [R, C/32]: at one block and at two rows of blocks.
  expectQuantizingMatchesTheOracle(*peer, "rmsnorm_q8_0", &library::rmsNormQ8_0,
                                   {{3, 32}, {17, 64}});
}

TEST(InductorPeer, APeerThatCannotBuildIsSkippedNotAFailedRun) {
#ifndef LANEJIT_PEER_INDUCTOR
  GTEST_SKIP() << "the inductor peer is not built here";
#else
  // Before: a "Python" that exits 1 at once, and one that is not there.
  EXPECT_EQ(makeInductorPeer("/nonexistent/python3", LANEJIT_INDUCTOR_SCRIPT), nullptr);
  BenchOptions options;
  options.protocol = {"custom", 0.001, 0.0002, int64_t{1} << 20, 3};
  options.cases = {libraryCase("rmsnorm:5x33")};
  options.only = {"lanejit", "inductor"};
  options.threads = 1;
  options.compile_times = false;
  options.progress = false;
  options.out_dir = fs::temp_directory_path() /
                    ("inductor-skip-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(options.out_dir);
  options.make_peers = [] {
    std::vector<std::unique_ptr<Peer>> peers;
    peers.push_back(makeInductorPeer("/bin/false", LANEJIT_INDUCTOR_SCRIPT));
    return peers;
  };
  // Action.
  BenchResult result = runBench(options);
  // Expected: the run passed with lanejit alone.
  EXPECT_TRUE(result.record.passed());
  ASSERT_EQ(result.record.cases.size(), 1u);
  ASSERT_EQ(result.record.cases[0].variants.size(), 1u);
  EXPECT_EQ(result.record.cases[0].variants[0].name, "lanejit");
  fs::remove_all(result.bundle_dir);
#endif
}

#ifdef LANEJIT_HAVE_AUDIT
nlohmann::json readJson(const fs::path &path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

bool mentions(const audit::AuditResult &r, const std::string &word) {
  for (const std::string &f : r.failures)
    if (f.find(word) != std::string::npos)
      return true;
  return false;
}

// A copy of the bundle with `edit` applied, audited.
audit::AuditResult auditEdited(const fs::path &bundle, const std::string &name,
                               const std::function<void(const fs::path &)> &edit) {
  fs::path copy = bundle.parent_path() / (bundle.filename().string() + "-" + name);
  fs::remove_all(copy);
  fs::copy(bundle, copy, fs::copy_options::recursive);
  edit(copy);
  audit::AuditResult result = audit::auditBundle(copy);
  fs::remove_all(copy);
  return result;
}

void flipByte(const fs::path &file, size_t from_end) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  std::streamoff at = static_cast<std::streamoff>(f.tellg()) - static_cast<std::streamoff>(from_end);
  f.seekg(at);
  char byte = 0;
  f.read(&byte, 1);
  byte ^= 0x5a;
  f.seekp(at);
  f.write(&byte, 1);
}

TEST(InductorPeer, ItsRowsAreAuditedAndTamperingIsCaught) {
  std::string why;
  if (!inductorOrSkipReason(why))
    GTEST_SKIP() << why;
  // Before: a short run of a seed case, lanejit with fusion on and off
  // against Inductor, the bundle audited.
  BenchOptions options;
  options.protocol = {"custom", 0.001, 0.0002, int64_t{1} << 20, 3};
  options.cases = {libraryCase("rope:17x66")};
  options.only = {"lanejit", "lanejit-unfused", "inductor"};
  options.threads = 1;
  options.compile_times = false;
  options.progress = false;
  options.out_dir = fs::temp_directory_path() /
                    ("inductor-audit-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(options.out_dir);
  BenchResult result = runBench(options);
  ASSERT_TRUE(result.record.passed());
  const fs::path b = result.bundle_dir;
  nlohmann::json bundle = readJson(b / "bundle.json");
  const std::string so = "peers/inductor/rope-17x66-t1/kernel_0.so";
  for (const std::string &file : {so, std::string("peers/inductor/rope-17x66-t1/kernel_0.cpp"),
                                 std::string("peers/inductor/rope-17x66-t1/plan.json"),
                                 std::string("outputs/rope-17x66/inductor.npy")})
    EXPECT_TRUE(bundle["files"].contains(file)) << file << " is not hashed into the bundle";
  std::ifstream report_in(b / "report.md");
  std::string report((std::istreambuf_iterator<char>(report_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("the seed's On÷Inductor (M1 Max)"), std::string::npos);
  // Both kernels' machine code, read from objects in the bundle.
  bool lanejit_code = false, inductor_kernel = false;
  for (const auto &r : bundle["cases"][0]["machine_code"]) {
    lanejit_code = lanejit_code || (r["variant"] == "lanejit" && r["instructions"].get<int>() > 0);
    inductor_kernel = inductor_kernel || (r["variant"] == "inductor" && r["function"] == "kernel" &&
                                          r["file"] == so && r["instructions"].get<int>() > 0);
  }
  EXPECT_TRUE(lanejit_code && inductor_kernel) << bundle["cases"][0]["machine_code"].dump(1);
  EXPECT_NE(report.find("| rope-17x66 inductor | kernel |"), std::string::npos);
  audit::AuditResult clean = audit::auditBundle(b);
  for (const std::string &f : clean.failures)
    ADD_FAILURE() << "audit: " << f;

  // Action + Expected: each tampering fails the audit.
  // An inductor sample doubled (the visit's value no longer its median).
  EXPECT_FALSE(auditEdited(b, "sample", [](const fs::path &dir) {
                 nlohmann::json j = readJson(dir / "bundle.json");
                 for (auto &round : j["cases"][0]["rounds"])
                   for (auto &visit : round["visits"])
                     if (visit["variant"] == "inductor")
                       for (auto &s : visit["samples_s"])
                         s = s.get<double>() * 2;
                 std::ofstream(dir / "bundle.json") << j.dump(1);
               }).pass());
  // Inductor's saved output altered.
  audit::AuditResult output = auditEdited(
      b, "output", [](const fs::path &dir) { flipByte(dir / "outputs/rope-17x66/inductor.npy", 3); });
  EXPECT_FALSE(output.pass());
  EXPECT_TRUE(mentions(output, "inductor.npy"));
  // Inductor's shared object altered.
  audit::AuditResult object =
      auditEdited(b, "object", [&](const fs::path &dir) { flipByte(dir / so, 100); });
  EXPECT_FALSE(object.pass());
  EXPECT_TRUE(mentions(object, "kernel_0.so"));
  // The seed table's On/Inductor cell changed (the file's hash re-recorded).
  audit::AuditResult seed = auditEdited(b, "seed-table", [](const fs::path &dir) {
    std::ifstream in(dir / "report.md");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t row = text.rfind("| rope-17x66 |");
    size_t cell = text.find(" [", row);
    size_t start = text.rfind("| ", cell) + 2;
    text.replace(start, cell - start, "0.001");
    std::ofstream(dir / "report.md") << text;
    nlohmann::json j = readJson(dir / "bundle.json");
    std::ifstream again(dir / "report.md", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
    j["files"]["report.md"] = audit::sha256Hex(bytes);
    std::ofstream(dir / "bundle.json") << j.dump(1);
  });
  EXPECT_FALSE(seed.pass());
  EXPECT_TRUE(mentions(seed, "report.md"));
  // A machine-code record that is not what the object holds.
  audit::AuditResult code = auditEdited(b, "machine-code", [](const fs::path &dir) {
    nlohmann::json j = readJson(dir / "bundle.json");
    for (auto &r : j["cases"][0]["machine_code"])
      if (r["variant"] == "inductor" && r["function"] == "kernel")
        r["instructions"] = r["instructions"].get<int>() + 1;
    std::ofstream(dir / "bundle.json") << j.dump(1);
  });
  EXPECT_FALSE(code.pass());
  EXPECT_TRUE(mentions(code, "wrong machine code"));
  fs::remove_all(b);
}
#endif

} // namespace
} // namespace lanejit::bench
