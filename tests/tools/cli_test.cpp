// The built `lanejit` binary, run as a user would: programs and .npy files
// written to a temporary folder, outputs read back and checked against the
// oracle, bad invocations answered by exit 1 and one line on stderr.
#include "check/npy.h"
#include "support/command_line.h"

#include <lanejit/check.h>
#include <lanejit/dsl.h>
#include <lanejit/library.h>
#include <lanejit/reference.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

using Result = test::CommandResult;

class Cli : public ::testing::Test {
protected:
  std::string path(const std::string &name) const { return scratch_.file(name); }

  // Runs `lanejit ARGS` with stdout and stderr captured.
  Result run(const std::string &args) const {
    return test::runBinary(LANEJIT_CLI_PATH, args, scratch_);
  }

  // Saves a case's input buffers as NAME.npy (row tensors 2-D, column
  // vectors 1-D, scalars 0-D) and returns the --in flags.
  std::string saveInputs(const check::Case &c) const {
    std::string flags;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Param &param = c.program.inputs[i];
      const check::GuardedBuffer &b = c.inputs[i];
      npy::Array a;
      if (param.kind == ParamKind::RowTensor)
        a.shape = {b.rows(), b.cols()};
      else if (param.kind == ParamKind::ColVector)
        a.shape = {b.cols()};
      for (int64_t r = 0; r < b.rows(); ++r)
        for (int64_t col = 0; col < b.cols(); ++col)
          a.data.push_back(b.at(r, col));
      npy::write(path(param.name + ".npy"), a);
      flags += " --in " + param.name + "=" + path(param.name + ".npy");
    }
    return flags;
  }

  // The oracle's output `index` vs the .npy file the CLI wrote.
  void expectOutputMatches(const check::Case &c, size_t index, const std::string &file) const {
    std::vector<BufferRef> inputs = c.inputRefs();
    ReferenceOutput ref = evaluateReference(c.program, inputs, c.shape).at(index);
    npy::Array got = npy::read(file);
    ASSERT_EQ(got.shape, (std::vector<int64_t>{ref.rows, ref.cols}));
    for (int64_t r = 0; r < ref.rows; ++r)
      for (int64_t col = 0; col < ref.cols; ++col) {
        double want = ref.at(r, col), y = got.data[r * ref.cols + col];
        ASSERT_LE(std::abs(y - want), check::kTolerance * (1 + std::abs(want)))
            << "at [" << r << "," << col << "]";
      }
  }

  // A failing invocation: exit 1, nothing on stdout, one error line.
  void expectError(const Result &result, const std::string &phrase) const {
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err.rfind("lanejit: error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find(phrase), std::string::npos) << result.err;
  }

  test::ScratchDir scratch_{"lanejit_cli_test"};
};

// y = x * gamma + bias: a row tensor, a column vector and a scalar.
Program affine() {
  ProgramBuilder b("affine");
  Expr x = b.rows("x"), gamma = b.columns("gamma"), bias = b.scalar("bias");
  b.output("y", x * gamma + bias);
  return b.build();
}

TEST_F(Cli, RunsATextProgramOnNpyFiles) {
  // Before: the program's text and random inputs on disk.
  Program program = affine();
  std::ofstream(path("affine.lj")) << print(program);
  check::Case c = check::makeCase(program, {5, 19}, check::Fill::Random, 3);
  std::string in = saveInputs(c);
  // Expected: exit 0 and y.npy equal to the oracle's answer.
  Result result = run("run '" + path("affine.lj") + "'" + in + " --out y=" + path("y.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(c, 0, path("y.npy"));
}

TEST_F(Cli, RunsALibraryProgramWithFlags) {
  check::Case c = check::makeCase(library::rope(), {3, 38});
  // Flags may come before PROGRAM: each --in takes exactly one value.
  Result result =
      run("run --lanes 4 --no-spec" + saveInputs(c) + " lib:rope --out y=" + path("y.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(c, 0, path("y.npy"));
}

TEST_F(Cli, DumpTextPrintsTheProgram) {
  Result result = run("dump --stage=text lib:swiglu");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(parse(result.out).hash(), library::swiglu().hash());
}

TEST_F(Cli, DumpIrPrintsSomething) {
  Result result = run("dump --stage=ir lib:layernorm");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(result.out.empty());
}

TEST_F(Cli, MissingInputIsAnError) {
  check::Case c = check::makeCase(library::swiglu(), {2, 9});
  saveInputs(c);
  Result result = run("run lib:swiglu --in x=" + path("x.npy") + " --out y=" + path("y.npy"));
  expectError(result, "missing --in u=");
  EXPECT_FALSE(fs::exists(path("y.npy")));
}

TEST_F(Cli, UnknownAndDuplicateNamesAreErrors) {
  check::Case c = check::makeCase(library::swiglu(), {2, 9});
  std::string in = saveInputs(c), out = " --out y=" + path("y.npy");
  expectError(run("run lib:swiglu" + in + " --in bogus=" + path("x.npy") + out),
              "has no input 'bogus'");
  expectError(run("run lib:swiglu" + in + " --in x=" + path("x.npy") + out), "given twice");
  expectError(run("run lib:swiglu" + in + " --out z=" + path("z.npy") + out), "has no output 'z'");
  expectError(run("run lib:swiglu" + in), "missing --out y=");
  expectError(run("run lib:swiglu --in x" + out), "NAME=FILE");
}

TEST_F(Cli, BadFilesAreErrors) {
  check::Case c = check::makeCase(library::layerNorm(), {2, 9});
  saveInputs(c);
  std::string out = " --out y=" + path("y.npy");
  // gamma given as a 2-D array.
  npy::write(path("g2.npy"), npy::Array{{1, 9}, std::vector<float>(9, 1.0f)});
  expectError(run("run lib:layernorm --in x=" + path("x.npy") + " --in beta=" + path("beta.npy") +
                  " --in gamma=" + path("g2.npy") + out),
              "needs a 1-D array");
  // Not a .npy file at all.
  std::ofstream(path("junk.npy")) << "junk";
  expectError(
      run("run lib:swiglu --in x=" + path("junk.npy") + " --in u=" + path("junk.npy") + out),
      "not a .npy file");
  expectError(run("run '" + path("missing.lj") + "'" + out), "missing.lj");
}

TEST_F(Cli, ShapeMismatchIsAnError) {
  check::Case a = check::makeCase(library::swiglu(), {2, 9});
  saveInputs(a);
  npy::write(path("u.npy"), npy::Array{{2, 8}, std::vector<float>(16, 1.0f)});
  expectError(run("run lib:swiglu --in x=" + path("x.npy") + " --in u=" + path("u.npy") +
                  " --out y=" + path("y.npy")),
              "u");
}

TEST_F(Cli, MalformedProgramTextIsAnError) {
  std::ofstream(path("bad.lj")) << "this is not a program\n";
  expectError(run("run '" + path("bad.lj") + "' --out y=" + path("y.npy")), "bad.lj");
}

TEST_F(Cli, CommandLineMistakesAreErrors) {
  expectError(run(""), "");
  expectError(run("frobnicate"), "");
  expectError(run("dump --stage=bogus lib:rope"), "");
  expectError(run("run lib:nosuchop --out y=" + path("y.npy")), "nosuchop");
}

TEST_F(Cli, HelpExitsZero) {
  Result result = run("--help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("run"), std::string::npos);
}

} // namespace
} // namespace lanejit
