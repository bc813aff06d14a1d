// The hand-written NEON peers (bench/neon/neon_kernels.c), the bar of the
// AArch64 cycle estimate (docs/aarch64-estimates.md): cross-compiled with
// aarch64-linux-gnu-gcc (-mcpu=neoverse-n1: GCC 12 knows no apple-m1), run
// under qemu-aarch64 on inputs written here, and every output compared with
// lanejit's FP64 oracle at atol = rtol = 5e-5. The driver (check_driver.c)
// also fails a run whose kernel reads past an input or stores outside y's
// rows. Shapes: the seed's, every tail of the vector and the 48-float
// block, padded strides; masked softmax at every valid length of a C.
#include <lanejit/check.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef LANEJIT_SOURCE_DIR
#error "tests/CMakeLists.txt defines LANEJIT_SOURCE_DIR (bench/neon's sources)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

// A configured path when CMake found one, else the name on PATH.
std::string findTool(const char *configured, const char *name) {
  if (configured[0] && ::access(configured, X_OK) == 0)
    return configured;
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos)
      end = dirs.size();
    std::string candidate = dirs.substr(at, end - at) + "/" + name;
    if (end > at && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    at = end + 1;
  }
  return "";
}

// CMake's cross-toolchain paths (cmake/cross_aarch64.cmake) when it has
// them, else empty: then PATH and Debian's sysroot.
#ifndef LANEJIT_AARCH64_CC
#define LANEJIT_AARCH64_CC ""
#endif
#ifndef LANEJIT_QEMU_AARCH64
#define LANEJIT_QEMU_AARCH64 ""
#endif
#ifndef LANEJIT_AARCH64_SYSROOT
#define LANEJIT_AARCH64_SYSROOT ""
#endif

std::string sysroot() {
  return LANEJIT_AARCH64_SYSROOT[0] ? LANEJIT_AARCH64_SYSROOT : "/usr/aarch64-linux-gnu";
}

std::string shellQuoted(const std::string &s) {
  return "'" + s + "'";
}

class NeonPeers : public ::testing::Test {
protected:
  // Builds the driver once for the suite; empty when a tool is missing.
  static void SetUpTestSuite() {
    cc_ = findTool(LANEJIT_AARCH64_CC, "aarch64-linux-gnu-gcc");
    qemu_ = findTool(LANEJIT_QEMU_AARCH64, "qemu-aarch64");
    if (cc_.empty() || qemu_.empty() || !fs::is_directory(sysroot()))
      return;
    dir_ = fs::temp_directory_path() / ("lanejit-neon-peers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::string neon = std::string(LANEJIT_SOURCE_DIR) + "/bench/neon/";
    // The estimate's flags (bench/neon/mca_estimate.py), static so that
    // qemu needs no loader; -ffp-contract=off: the kernels' FMAs are written.
    std::string cmd = shellQuoted(cc_) +
                      " -O3 -mcpu=neoverse-n1 -ffp-contract=off -fno-math-errno"
                      " -fno-tree-loop-distribute-patterns -static -I " +
                      shellQuoted(neon) + " " + shellQuoted(neon + "neon_kernels.c") + " " +
                      shellQuoted(neon + "check_driver.c") + " -o " +
                      shellQuoted((dir_ / "check_driver").string()) + " 2>&1";
    built_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }
  void SetUp() override {
    if (cc_.empty() || qemu_.empty() || !fs::is_directory(sysroot()))
      GTEST_SKIP() << "NEON peer tests skipped: needs aarch64-linux-gnu-gcc, qemu-aarch64 and "
                      "the /usr/aarch64-linux-gnu sysroot (scripts/install-deps)";
    ASSERT_TRUE(built_) << "cross-compiling bench/neon/check_driver.c failed";
  }

  // Runs the peer on c's inputs under qemu and stores its y into c.
  ::testing::AssertionResult runPeer(const std::string &op, check::Case &c) {
    fs::path in = dir_ / "in.bin", out = dir_ / "out.bin";
    {
      std::ofstream f(in, std::ios::binary);
      for (const check::GuardedBuffer &b : c.inputs)
        f.write(static_cast<const char *>(b.raw()), b.bytes());
    }
    const check::GuardedBuffer &x = c.inputs[0];
    std::string cmd = shellQuoted(qemu_) + " -L " + shellQuoted(sysroot()) + " " +
                      shellQuoted((dir_ / "check_driver").string()) + " " + op + " " +
                      std::to_string(x.rows()) + " " + std::to_string(x.cols()) + " " +
                      std::to_string(x.rowStride()) + " " + shellQuoted(in.string()) + " " +
                      shellQuoted(out.string()) + " 2>&1";
    if (int status = std::system(cmd.c_str()); status != 0)
      return ::testing::AssertionFailure() << "the aarch64 run failed (status " << status << ")";
    check::GuardedBuffer &y = c.outputs[0];
    std::ifstream f(out, std::ios::binary);
    f.read(static_cast<char *>(y.raw()), y.bytes());
    if (f.gcount() != y.bytes())
      return ::testing::AssertionFailure() << "short output file";
    return ::testing::AssertionSuccess();
  }

  // The peer on one case, against the oracle.
  void expectAgrees(const std::string &op, Shape shape, check::Fill fill, int64_t pad = 0,
                    void (*special)(check::Case &) = nullptr) {
    check::Case c = check::makeCase(library::byName(op), shape, fill,
                                    static_cast<uint64_t>(shape.rows * 977 + shape.cols), pad);
    if (special)
      special(c);
    SCOPED_TRACE(op + " " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                 " pad " + std::to_string(pad));
    ASSERT_TRUE(runPeer(op, c));
    check::Comparison cmp = check::compareWithReference(c);
    EXPECT_TRUE(cmp.ok()) << cmp.failures << " of " << cmp.checked << " outside 5e-5; first "
                          << cmp.first_failure;
  }

  static inline std::string cc_, qemu_;
  static inline fs::path dir_;
  static inline bool built_ = false;
};

// Column counts around every tail: below one vector, each remainder mod 4,
// and around the 48-float (RMSNorm) and 16-float (softmax, scaling) blocks.
const std::vector<int64_t> &tailColumns() {
  static const std::vector<int64_t> cols = {1,  2,  3,  4,  5,  6,  7,  8,  9,  15,  16, 17,
                                            19, 31, 47, 48, 49, 51, 63, 64, 65, 95, 96, 97};
  return cols;
}

TEST_F(NeonPeers, SeedShapesWithFixtures) {
  for (const char *op : {"rmsnorm", "masked_softmax"}) {
    expectAgrees(op, {17, 65}, check::Fill::Fixture);
    expectAgrees(op, {1024, 4097}, check::Fill::Fixture);
  }
}

TEST_F(NeonPeers, RmsNormEveryTail) {
  for (int64_t cols : tailColumns())
    expectAgrees("rmsnorm", {5, cols}, check::Fill::Random, cols % 3);
  expectAgrees("rmsnorm", {3, 4096}, check::Fill::Random);
  expectAgrees("rmsnorm", {2, 1048576 / 64 + 3}, check::Fill::Random);
}

// Row r keeps its first r mod C + 1 columns: R = C + 2 rows reach every
// valid length, and the wrap back to one column.
TEST_F(NeonPeers, MaskedSoftmaxEveryValidLength) {
  for (int64_t cols : tailColumns())
    expectAgrees("masked_softmax", {cols + 2, cols}, check::Fill::Random, cols % 3);
  expectAgrees("masked_softmax", {40, 4097}, check::Fill::Random);
}

// Scores far apart: e^(x - max) underflows (the peer flushes below -87.3,
// the oracle gives 0 or a denormal, both within the tolerance), and a row
// whose max sits in the tail vector.
TEST_F(NeonPeers, MaskedSoftmaxLargeScores) {
  auto spread = [](check::Case &c) {
    check::GuardedBuffer &x = c.inputs[0];
    for (int64_t r = 0; r < x.rows(); ++r)
      for (int64_t col = 0; col < x.cols(); ++col)
        x.at(r, col) = static_cast<float>((col * 37 + r * 11) % 61) * 2.5f - 120.0f;
  };
  for (int64_t cols : {5, 17, 66, 131})
    expectAgrees("masked_softmax", {cols + 2, cols}, check::Fill::Random, 0, spread);
}

// Large and tiny magnitudes: the sum of squares stays finite in f32 and the
// row scale brings every output back to about gamma.
TEST_F(NeonPeers, RmsNormScaledRows) {
  auto scaled = [](check::Case &c) {
    check::GuardedBuffer &x = c.inputs[0];
    for (int64_t r = 0; r < x.rows(); ++r)
      for (int64_t col = 0; col < x.cols(); ++col)
        x.at(r, col) *= r % 2 ? 1e15f : 1e-15f;
  };
  for (int64_t cols : {3, 50, 257})
    expectAgrees("rmsnorm", {4, cols}, check::Fill::Random, 1, scaled);
}

} // namespace
} // namespace lanejit
