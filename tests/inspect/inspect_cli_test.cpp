// `lanejit inspect` and `lanejit dump`'s stages, run as a user would.
#include "inspect/shared_object_builder.h"
#include "support/command_line.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;

using Result = lanejit::test::CommandResult;

class InspectCli : public ::testing::Test {
protected:
  // The CLI compiles for this CPU and its own features, not the host or an
  // environment's target: LLVM's tuning for the host would change the code
  // these tests read (see tests/inspect/inspect_test.cpp). An empty variable
  // counts as unset.
  static void SetUpTestSuite() {
    for (const char *name : {"LANEJIT_TARGET_CPU", "LANEJIT_TARGET_FEATURES"})
      if (const char *v = std::getenv(name))
        saved().emplace_back(name, v);
    setenv("LANEJIT_TARGET_CPU", "x86-64-v4", 1);
    setenv("LANEJIT_TARGET_FEATURES", "", 1);
  }
  static void TearDownTestSuite() {
    unsetenv("LANEJIT_TARGET_CPU");
    unsetenv("LANEJIT_TARGET_FEATURES");
    for (const auto &[name, value] : saved())
      setenv(name.c_str(), value.c_str(), 1);
  }
  static std::vector<std::pair<std::string, std::string>> &saved() {
    static std::vector<std::pair<std::string, std::string>> environment;
    return environment;
  }

  Result run(const std::string &args) const {
    return lanejit::test::runBinary(LANEJIT_CLI_PATH, args, scratch_);
  }

  void expectError(const std::string &args, const std::string &phrase) const {
    Result r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(r.err.rfind("lanejit: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(phrase), std::string::npos) << args << ": " << r.err;
  }

  lanejit::test::ScratchDir scratch_{"lanejit_inspect_cli"};
  const std::filesystem::path &dir_ = scratch_.path();
};

TEST_F(InspectCli, PrintsEveryFunctionsMetrics) {
  Result r = run("inspect lib:rope --lanes 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kernel: rope, 16 lanes, full-packet specialization on, ", 0), 0u) << r.out;
  for (const char *line : {"function lanejit_rope_0\n", "stack frame: ", "(stack-sizes section)",
                           "calls:       none\n", "full-packet body: inlined: 1 dense loop",
                           "tail body:        inlined: 6 masked memory ops"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST_F(InspectCli, JsonAndDiff) {
  Result json = run("inspect lib:rope --lanes 16 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\n  \"format\": ", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("\"masked_loops\": 0"), std::string::npos) << json.out;

  Result diff = run("inspect lib:rope --lanes 16 --diff=--disable-pass=specialize-full-packets");
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("masked loops: 0 -> 1"), std::string::npos) << diff.out;
  Result same = run("inspect lib:rope --lanes 16 --diff=--enable=SPECIALIZE_FULL_PACKETS");
  EXPECT_NE(same.out.find("no differences"), std::string::npos) << same.out;
  Result lanes = run("inspect lib:swiglu --lanes 16 --diff='--lanes=8 --disable SPECIALIZE_FULL_PACKETS'");
  EXPECT_NE(lanes.out.find("with --lanes=8 --disable SPECIALIZE_FULL_PACKETS"), std::string::npos) << lanes.out;
  EXPECT_NE(lanes.out.find("masked loops: 0 -> 1"), std::string::npos) << lanes.out;
  EXPECT_NE(lanes.out.find("vector bits: 512 -> 256"), std::string::npos) << lanes.out;
}

TEST_F(InspectCli, DumpStages) {
  Result passes = run("dump lib:rope --stage=passes");
  ASSERT_EQ(passes.exit_code, 0) << passes.err;
  EXPECT_NE(passes.out.find("; --- IR after eliminate-slices ---"), std::string::npos);
  EXPECT_NE(passes.out.find("; pass cse"), std::string::npos);
  Result unopt = run("dump lib:rope --stage=llvm-unoptimized --lanes 16");
  ASSERT_EQ(unopt.exit_code, 0) << unopt.err;
  EXPECT_NE(unopt.out.find("@llvm.masked.load"), std::string::npos);
  Result object = run("dump lib:rope --stage=object --lanes 16");
  ASSERT_EQ(object.exit_code, 0) << object.err;
  EXPECT_EQ(object.out.rfind("lanejit_rope_0:", 0), 0u) << object.out;
  EXPECT_NE(object.out.find("vmovups zmmword ptr"), std::string::npos) << object.out;
  EXPECT_NE(object.out.find("ret\n"), std::string::npos);
}

TEST_F(InspectCli, BadInvocationsAreOneLineErrors) {
  expectError("inspect lib:nosuch", "nosuch");
  expectError("inspect '" + (dir_ / "missing.lj").string() + "'", "missing.lj");
  std::ofstream(dir_ / "bad.lj") << "this is not a program\n";
  expectError("inspect '" + (dir_ / "bad.lj").string() + "'", "bad.lj");
  expectError("inspect lib:rope --diff=--bogus", "--diff: The following argument was not expected: --bogus");
  expectError("inspect lib:rope --diff=--lanes=x", "--diff: Could not convert: --lanes = x");
  expectError("inspect lib:rope --diff=--lanes=5", "lanes must be 4, 8 or 16");
  expectError("dump lib:rope --stage=nosuch", "nosuch");
  expectError("inspect '" + (dir_ / "missing.o").string() + "'", "cannot read");
  std::ofstream(dir_ / "junk.o") << "not an ELF file\n";
  expectError("inspect '" + (dir_ / "junk.o").string() + "'", "not an object file");
}

TEST_F(InspectCli, SharedObjectFunctions) {
  if (!lanejit::test::haveCxx())
    GTEST_SKIP() << "no C++ compiler (c++) to build a shared object";
  ASSERT_FALSE(lanejit::test::buildSharedObject(scratch_, "kernel", "cpp",
                                                lanejit::test::kKernelSource,
                                                lanejit::test::kKernelFlags)
                   .empty());
  std::string so = "'" + (dir_ / "kernel.so").string() + "'";
  Result all = run("inspect " + so);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find(", shared object\n"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("function unrelated\n"), std::string::npos) << all.out;

  Result one = run("inspect " + so + " --function kernel");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("function kernel\n"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("function unrelated"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("(prologue)"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("expf@0x"), std::string::npos) << "the call, named\n" << one.out;

  // Repeatable, before the file too; with --json and --disasm.
  Result two = run("inspect --function unrelated --function kernel " + so + " --json");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("\"kind\": \"shared object\""), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("\"name\": \"kernel\""), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("\"name\": \"unrelated\""), std::string::npos) << two.out;
  Result listing = run("inspect " + so + " --function unrelated --disasm");
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_EQ(listing.out.rfind("unrelated:", 0), 0u) << listing.out;
  EXPECT_EQ(listing.out.find("kernel:"), std::string::npos) << listing.out;

  expectError("inspect " + so + " --function nosuch", "no function 'nosuch' in the object");
}

TEST_F(InspectCli, AArch64KernelReport) {
  Result r = run("inspect --target aarch64-linux-gnu --target-cpu apple-m1 lib:rmsnorm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char *line : {"cpu apple-m1", "object: elf64-littleaarch64", "imports: none",
                           "llvm-mca: cpu apple-m1, cycles per iteration of each innermost loop",
                           "widest vector memory operand 128 bits", "(stack-sizes section)",
                           "0 masked, 0 scalar)", "full-packet body: inlined: ",
                           "tail body:        inlined: "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.out.find("single-lane memory ops outside the packet loops"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" cycles/iteration"), std::string::npos) << r.out;
  Result json = run("inspect --target aarch64-linux-gnu --target-cpu apple-m1 lib:rope --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"arch\": \"aarch64\""), std::string::npos) << json.out;
  Result disasm =
      run("inspect --target aarch64-linux-gnu --target-cpu apple-m1 lib:rope --disasm");
  ASSERT_EQ(disasm.exit_code, 0) << disasm.err;
  EXPECT_NE(disasm.out.find("ldp q"), std::string::npos) << disasm.out;
  // The x86 report carries the estimates too.
  Result x86 = run("inspect lib:rmsnorm");
  ASSERT_EQ(x86.exit_code, 0) << x86.err;
  EXPECT_NE(x86.out.find("llvm-mca: cpu x86-64-v4"), std::string::npos) << x86.out;
}

TEST_F(InspectCli, FunctionFilterOnAProgram) {
  Result r = run("inspect lib:rope --lanes 16 --function lanejit_rope_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("function lanejit_rope_0\n"), std::string::npos) << r.out;
  expectError("inspect lib:rope --function rope", "no function 'rope' in the object");
}

} // namespace
