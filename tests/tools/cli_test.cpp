// The built `lanejit` binary, run as a user would: programs and .npy files
// written to a temporary folder, outputs read back and checked against the
// oracle (bf16, f16 and i8 outputs bit for bit against
// lanejit/element_types.h, int8 quantization against the library kernel),
// bad invocations answered by exit 1 and one line on stderr.
#include "npy.h"
#include "support/command_line.h"

#include <lanejit/check.h>
#include <lanejit/dsl.h>
#include <lanejit/element_types.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/reference.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
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

namespace lanejit {
namespace {

namespace fs = std::filesystem;

using Result = test::CommandResult;

// The .npy form of a buffer type: bf16 as ml_dtypes saves it, f16 as
// float16, i8 as int8.
npy::Dtype fileDtype(DType type) {
  return type == DType::BF16  ? npy::Dtype::BF16
         : type == DType::F16 ? npy::Dtype::F16
         : type == DType::I8  ? npy::Dtype::I8
                              : npy::Dtype::F32;
}

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
      a.dtype = fileDtype(b.type());
      const auto *bits = static_cast<const uint16_t *>(b.raw());
      const auto *int8 = static_cast<const int8_t *>(b.raw());
      for (int64_t r = 0; r < b.rows(); ++r)
        for (int64_t col = 0; col < b.cols(); ++col)
          if (a.dtype == npy::Dtype::F32)
            a.data.push_back(b.at(r, col));
          else if (a.dtype == npy::Dtype::I8)
            a.int8.push_back(int8[r * b.rowStride() + col]);
          else
            a.bits.push_back(bits[r * b.rowStride() + col]);
      npy::write(path(param.name + ".npy"), a);
      flags += " --in " + param.name + "=" + path(param.name + ".npy");
    }
    return flags;
  }

  // The oracle's output `index` vs the .npy file the CLI wrote.
  void expectOutputMatches(const check::Case &c, size_t index, const std::string &file) const {
    std::vector<BufferRef> inputs = c.inputRefs();
    ReferenceOutput ref = evaluateReference(c.program, inputs, c.shape).at(index);
    npy::Array got = npy::read(file, npy::Accept::Any);
    ASSERT_EQ(got.shape, (std::vector<int64_t>{ref.rows, ref.cols}));
    DType type = c.program.outputs.at(index).type;
    ASSERT_EQ(got.dtype, fileDtype(type));
    for (int64_t r = 0; r < ref.rows; ++r)
      for (int64_t col = 0; col < ref.cols; ++col) {
        double want = ref.at(r, col), y = readElement(got.raw(), type, r * ref.cols + col);
        ASSERT_TRUE(check::agrees(y, want, type))
            << "at [" << r << "," << col << "]: got " << y << ", want " << want;
      }
  }

  // A failing invocation: exit 1, nothing on stdout, one error line.
  void expectError(const Result &result, const std::string &phrase) const {
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err.rfind("lanejit: error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find(phrase), std::string::npos) << result.err;
  }

  // `lanejit ARGS` with files limited to `blocks` blocks (512 bytes each in
  // dash) and SIGXFSZ ignored, so a longer write fails with EFBIG instead of
  // killing the process: a write failure that happens even as root.
  Result runWithFileSizeLimit(const std::string &args, int blocks) const {
    std::string out = path("command.stdout"), err = path("command.stderr");
    Result r;
    r.exit_code = test::shell("(trap '' XFSZ; ulimit -f " + std::to_string(blocks) + "; exec '" +
                              LANEJIT_CLI_PATH + "' " + args + ") >'" + out + "' 2>'" + err + "'");
    r.out = test::slurp(out);
    r.err = test::slurp(err);
    return r;
  }

  // Saves the program's text and inputs; returns " 'PROGRAM' --in ...".
  std::string saveProgram(const Program &program, const check::Case &c) const {
    std::ofstream(path(program.name + ".lj")) << print(program);
    return " '" + path(program.name + ".lj") + "'" + saveInputs(c);
  }

  // Files in the scratch folder whose names mark them as temporary.
  std::vector<std::string> temporaryFiles() const {
    std::vector<std::string> found;
    for (const fs::directory_entry &e : fs::recursive_directory_iterator(scratch_.path()))
      if (e.path().filename().string().find(".tmp-") != std::string::npos)
        found.push_back(e.path().string());
    return found;
  }

  test::ScratchDir scratch_{"lanejit_cli_test"};
};

// What an output file held before a failing command, which must leave it so.
const std::string kPrevious = "previous contents";

// Compared as a flag, so a replaced 64 KB file does not flood the log.
void expectUntouched(const std::string &file) {
  std::string now = test::slurp(file);
  EXPECT_TRUE(now == kPrevious) << file << " was replaced: " << now.size() << " bytes now";
}

// y = x * gamma + bias: a row tensor, a column vector and a scalar.
Program affine() {
  ProgramBuilder b("affine");
  Expr x = b.rows("x"), gamma = b.columns("gamma"), bias = b.scalar("bias");
  b.output("y", x * gamma + bias);
  return b.build();
}

// Two outputs: y = x * x and z = x + x.
Program pair() {
  ProgramBuilder b("pair");
  Expr x = b.rows("x");
  b.output("y", x * x);
  b.output("z", x + x);
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
      run("run --lanes 4 --disable SPECIALIZE_FULL_PACKETS" + saveInputs(c) +
          " lib:rope --out y=" + path("y.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(c, 0, path("y.npy"));
}

TEST_F(Cli, RunTakesAThreadCount) {
  check::Case c = check::makeCase(library::swiglu(), {70, 300});
  Result result =
      run("run --threads 3" + saveInputs(c) + " lib:swiglu --out y=" + path("y.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(c, 0, path("y.npy"));
  for (const char *bad : {"0", "-2"})
    expectError(run(std::string("run --threads ") + bad + saveInputs(c) + " lib:swiglu --out y=" +
                    path("y.npy")),
                "thread count must be in [1, 256]");
  expectError(run("bench --threads 0 --case swiglu:17x65"), "thread count must be at least 1");
}

// y = x * g in bf16 and the same product as f32 in z: one f32 multiply,
// rounded once, so each output's bits are known exactly.
Program bf16Product() {
  ProgramBuilder b("bf16_product");
  Expr x = b.rows("x", DType::BF16), g = b.columns("g", Dim::C(), DType::BF16);
  b.output("y", x * g, DType::BF16);
  b.output("z", x * g);
  return b.build();
}

// y = x * g in f16; w = x rounded to bf16.
Program f16Product() {
  ProgramBuilder b("f16_product");
  Expr x = b.rows("x", DType::F16), g = b.columns("g", Dim::C(), DType::F16);
  b.output("y", x * g, DType::F16);
  b.output("w", x, DType::BF16);
  return b.build();
}

// An array of 64 x 1024: every 16-bit pattern once.
npy::Array everyPattern(npy::Dtype dtype) {
  npy::Array a{{64, 1024}, {}, dtype, {}};
  for (uint32_t v = 0; v < 65536; ++v)
    a.bits.push_back(static_cast<uint16_t>(v));
  return a;
}

// 1024 column factors of `type`: ±1, tiny, huge and ordinary values, so the
// products round, overflow, go subnormal and meet NaN and infinities.
npy::Array columnFactors(DType type) {
  const float values[] = {1.0f, -1.0f, 0.75f, 3.0f, 1e-3f, 1e-30f, 300.0f, 1e30f, -0.1f};
  npy::Array a{{1024}, {}, fileDtype(type), {}};
  for (int i = 0; i < 1024; ++i) {
    float v = values[i % 9] * (1.0f + static_cast<float>(i) / 4096.0f);
    a.bits.push_back(type == DType::BF16 ? roundToBF16(v) : roundToF16(v));
  }
  return a;
}

// The canonical NaN f32 outputs hold (docs/switches.md, "NaN results").
uint32_t f32Bits(float value) {
  return std::isnan(value) ? 0xffc00000u : std::bit_cast<uint32_t>(value);
}

TEST_F(Cli, RunsABf16ProgramOnNpyFilesBitForBit) {
  std::ofstream(path("bf16.lj")) << print(bf16Product());
  npy::Array x = everyPattern(npy::Dtype::BF16), g = columnFactors(DType::BF16);
  npy::write(path("x.npy"), x);
  npy::write(path("g.npy"), g);
  // g also as torch writes bf16 bits: t.view(torch.uint16 or int16).numpy().
  npy::Array g_u2 = g, g_i2 = g;
  g_u2.dtype = npy::Dtype::U16;
  g_i2.dtype = npy::Dtype::I16;
  npy::write(path("g_u2.npy"), g_u2);
  npy::write(path("g_i2.npy"), g_i2);
  for (const char *g_file : {"g.npy", "g_u2.npy", "g_i2.npy"}) {
    SCOPED_TRACE(g_file);
    Result result = run("run '" + path("bf16.lj") + "' --in x=" + path("x.npy") + " --in g=" +
                        path(g_file) + " --out y=" + path("y.npy") + " --out z=" + path("z.npy"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    npy::Array y = npy::read(path("y.npy"), npy::Accept::Any);
    npy::Array z = npy::read(path("z.npy"));
    ASSERT_EQ(y.dtype, npy::Dtype::BF16);
    ASSERT_EQ(y.shape, x.shape);
    ASSERT_EQ(z.shape, x.shape);
    int64_t mismatches = 0;
    for (size_t i = 0; i < x.bits.size(); ++i) {
      float product = widenBF16(x.bits[i]) * widenBF16(g.bits[i % 1024]);
      bool y_ok = y.bits[i] == roundToBF16(product);
      if (!y_ok || std::bit_cast<uint32_t>(z.data[i]) != f32Bits(product)) {
        EXPECT_LT(++mismatches, 5) << "element " << i << ": x " << x.bits[i] << ", y "
                                   << y.bits[i] << ", want " << roundToBF16(product);
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST_F(Cli, RunsAnF16ProgramOnNpyFilesBitForBit) {
  std::ofstream(path("f16.lj")) << print(f16Product());
  npy::Array x = everyPattern(npy::Dtype::F16), g = columnFactors(DType::F16);
  npy::write(path("x.npy"), x);
  npy::write(path("g.npy"), g);
  Result result = run("run '" + path("f16.lj") + "' --in x=" + path("x.npy") + " --in g=" +
                      path("g.npy") + " --out y=" + path("y.npy") + " --out w=" + path("w.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  npy::Array y = npy::read(path("y.npy"), npy::Accept::Any);
  npy::Array w = npy::read(path("w.npy"), npy::Accept::Any);
  ASSERT_EQ(y.dtype, npy::Dtype::F16);
  ASSERT_EQ(w.dtype, npy::Dtype::BF16);
  ASSERT_EQ(y.shape, x.shape);
  ASSERT_EQ(w.shape, x.shape);
  int64_t mismatches = 0;
  for (size_t i = 0; i < x.bits.size(); ++i) {
    float value = widenF16(x.bits[i]);
    uint16_t want_y = roundToF16(value * widenF16(g.bits[i % 1024]));
    if (y.bits[i] != want_y || w.bits[i] != roundToBF16(value)) {
      EXPECT_LT(++mismatches, 5) << "element " << i << ": x " << x.bits[i] << ", y " << y.bits[i]
                                 << " (want " << want_y << "), w " << w.bits[i] << " (want "
                                 << roundToBF16(value) << ")";
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(Cli, RunsALibraryProgramInBf16AgainstTheOracle) {
  Program program = withStorage(library::layerNorm(), DType::BF16);
  check::Case c = check::makeCase(program, {5, 70}, check::Fill::Random, 7);
  Result result = run("run" + saveProgram(program, c) + " --out y=" + path("y.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(c, 0, path("y.npy"));
}

TEST_F(Cli, AFileOfAnotherElementTypeIsAnErrorNamingBoth) {
  std::string bf16 = " '" + path("bf16.lj") + "'", f16 = " '" + path("f16.lj") + "'";
  std::ofstream(path("bf16.lj")) << print(bf16Product());
  std::ofstream(path("f16.lj")) << print(f16Product());
  npy::Array x16 = everyPattern(npy::Dtype::F16);
  npy::write(path("x_f2.npy"), x16);
  x16.dtype = npy::Dtype::BF16;
  npy::write(path("x_bf16.npy"), x16);
  x16.dtype = npy::Dtype::U16;
  npy::write(path("x_u2.npy"), x16);
  npy::write(path("x_f4.npy"), npy::Array{{64, 1024}, std::vector<float>(65536, 1.0f)});
  npy::write(path("g_bf16.npy"), columnFactors(DType::BF16));
  npy::write(path("g_f2.npy"), columnFactors(DType::F16));
  std::ofstream(path("y.npy")) << kPrevious;
  std::string out = " --out y=" + path("y.npy") + " --out z=" + path("z.npy");
  const std::string bf16_takes = "bf16 inputs take bfloat16 ('<V2'), or its bits as uint16 "
                                 "('<u2') or int16 ('<i2')";
  expectError(run("run" + bf16 + " --in x=" + path("x_f4.npy") + " --in g=" + path("g_bf16.npy") +
                  out),
              "input 'x' is bf16 but " + path("x_f4.npy") +
                  " holds float32 ('<f4'), which is not converted; " + bf16_takes);
  expectError(run("run" + bf16 + " --in x=" + path("x_f2.npy") + " --in g=" + path("g_bf16.npy") +
                  out),
              "input 'x' is bf16 but " + path("x_f2.npy") + " holds float16 ('<f2')");
  out = " --out y=" + path("y.npy") + " --out w=" + path("w.npy");
  for (const char *file : {"x_bf16.npy", "x_u2.npy"})
    expectError(run("run" + f16 + " --in x=" + path(file) + " --in g=" + path("g_f2.npy") + out),
                "input 'x' is f16 but " + path(file) + " holds " +
                    (file == std::string("x_u2.npy") ? "uint16 ('<u2')" : "bfloat16 ('<V2')") +
                    ", which is not converted; f16 inputs take float16 ('<f2')");
  expectError(run("run" + f16 + " --in x=" + path("x_f2.npy") + " --in g=" + path("g_bf16.npy") +
                  out),
              "input 'g' is f16 but " + path("g_bf16.npy") + " holds bfloat16 ('<V2')");
  // An f32 input takes float32 only.
  saveInputs(check::makeCase(library::swiglu(), {64, 1024}));
  expectError(run("run lib:swiglu --in x=" + path("x_f2.npy") + " --in u=" + path("u.npy") +
                  " --out y=" + path("y.npy")),
              "input 'x' is f32 but " + path("x_f2.npy") +
                  " holds float16 ('<f2'), which is not converted; f32 inputs take float32 "
                  "('<f4')");
  // A dtype no input takes is the reader's error.
  std::string f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  f8.resize(117, ' ');
  std::ofstream(path("f8.npy")) << std::string("\x93NUMPY\x01\x00\x76\x00", 10) << f8 << '\n'
                                << std::string(16, '\0');
  expectError(run("run lib:swiglu --in x=" + path("f8.npy") + " --in u=" + path("u.npy") +
                  " --out y=" + path("y.npy")),
              "f8.npy: dtype '<f8' is not supported; only float32 '<f4', float16 '<f2'");
  expectUntouched(path("y.npy"));
  EXPECT_FALSE(fs::exists(path("z.npy")));
  EXPECT_FALSE(fs::exists(path("w.npy")));
}

// Dequantization: y = q * s, the row's scale s; c = q stored back as i8
// (where -128, which no write stores, saturates to -127).
Program dequantize() {
  return parse("program dequantize {\n  in q: i8[R, C]\n  in s: f32[R, 1]\n"
               "  out y: f32[R, C]\n  out c: i8[R, C]\n  %0 = load q[0:C]\n"
               "  %1 = load s[0:1]\n  %2 = reduce.max %1\n  %3 = mul %0, %2\n"
               "  y[0:C] = %3\n  c[0:C] = %0\n}\n");
}

TEST_F(Cli, RunsTheQuantizingEntriesAsTheLibraryKernelDoes) {
  // The per-row entries: q i8[R, C] and scale f32[R, 1].
  for (const std::string entry : {"quantize_q8", "rmsnorm_q8"}) {
    SCOPED_TRACE(entry);
    Program program = library::byName(entry);
    // 33 x 70: rows longer than a packet with a tail; random data in [-2, 2).
    check::Case c = check::makeCase(program, {33, 70}, check::Fill::Random, 11);
    std::string out = " --out q=" + path("q.npy") + " --out scale=" + path("scale.npy");
    Result result = run("run lib:" + entry + saveInputs(c) + out);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    // The headers np.save writes for numpy's int8 and float32 arrays.
    const std::string header = "{'descr': '|i1', 'fortran_order': False, 'shape': (33, 70), }";
    EXPECT_EQ(test::slurp(path("q.npy")).substr(10, header.size()), header);
    EXPECT_EQ(test::slurp(path("scale.npy")).substr(10, 15), "{'descr': '<f4'");
    npy::Array q = npy::read(path("q.npy"), npy::Accept::Any);
    npy::Array scale = npy::read(path("scale.npy"));
    ASSERT_EQ(q.dtype, npy::Dtype::I8);
    ASSERT_EQ(q.shape, (std::vector<int64_t>{33, 70}));
    ASSERT_EQ(scale.shape, (std::vector<int64_t>{33, 1}));
    // The library kernel in this process, on the same inputs: the same bits
    // (no switch, W or thread count changes a bit).
    compile(program).run(c.inputRefs(), c.outputRefs());
    for (int64_t r = 0; r < 33; ++r) {
      EXPECT_EQ(std::bit_cast<uint32_t>(scale.data[r]),
                std::bit_cast<uint32_t>(c.outputs[1].get(r, 0)))
          << "scale of row " << r;
      for (int64_t col = 0; col < 70; ++col)
        ASSERT_EQ(static_cast<float>(q.int8[r * 70 + col]), c.outputs[0].get(r, col))
            << "q[" << r << "," << col << "]";
    }
    expectOutputMatches(c, 0, path("q.npy"));
    expectOutputMatches(c, 1, path("scale.npy"));
  }
}

TEST_F(Cli, RunsAnInt8InputProgramOnEveryPatternExactly) {
  std::ofstream(path("dequantize.lj")) << print(dequantize());
  // Every int8 pattern in each of 8 rows of 256, each row its own scale.
  npy::Array q{{8, 256}, {}, npy::Dtype::I8, {}, {}};
  for (int i = 0; i < 8 * 256; ++i)
    q.int8.push_back(static_cast<int8_t>(i));
  const float scales[] = {1.0f, 0.5f, -0.0078125f, 3.0f / 127, 1e-3f, 0.0f, 1e30f, 7.25f};
  npy::Array s{{8, 1}, std::vector<float>(std::begin(scales), std::end(scales))};
  npy::write(path("q.npy"), q);
  npy::write(path("s.npy"), s);
  Result result = run("run '" + path("dequantize.lj") + "' --in q=" + path("q.npy") + " --in s=" +
                      path("s.npy") + " --out y=" + path("y.npy") + " --out c=" + path("c.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  npy::Array y = npy::read(path("y.npy")), c = npy::read(path("c.npy"), npy::Accept::Any);
  ASSERT_EQ(y.shape, q.shape);
  ASSERT_EQ(c.dtype, npy::Dtype::I8);
  ASSERT_EQ(c.shape, q.shape);
  int64_t mismatches = 0;
  for (size_t i = 0; i < q.int8.size(); ++i) {
    float want = static_cast<float>(q.int8[i]) * scales[i / 256]; // one f32 multiply
    if (std::bit_cast<uint32_t>(y.data[i]) != f32Bits(want) ||
        c.int8[i] != roundToI8(q.int8[i])) {
      EXPECT_LT(++mismatches, 5) << "element " << i << ": q " << int{q.int8[i]} << ", y "
                                 << y.data[i] << " (want " << want << "), c " << int{c.int8[i]};
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(c.int8[128], -127) << "-128 stores saturated";
  // Random data through the same program, against the oracle.
  check::Case random = check::makeCase(dequantize(), {5, 37}, check::Fill::Random, 5);
  result = run("run '" + path("dequantize.lj") + "'" + saveInputs(random) + " --out y=" +
               path("y.npy") + " --out c=" + path("c.npy"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expectOutputMatches(random, 0, path("y.npy"));
  expectOutputMatches(random, 1, path("c.npy"));
}

TEST_F(Cli, AnInt8InputTakesInt8FilesOnly) {
  std::ofstream(path("dequantize.lj")) << print(dequantize());
  npy::write(path("q_f4.npy"), npy::Array{{2, 4}, std::vector<float>(8, 1.0f)});
  npy::Array q_i1{{2, 4}, {}, npy::Dtype::I8, {}, std::vector<int8_t>(8, 3)};
  npy::write(path("q_i1.npy"), q_i1);
  npy::Array q_f2{{2, 4}, {}, npy::Dtype::F16, std::vector<uint16_t>(8, 0x3c00), {}};
  npy::write(path("q_f2.npy"), q_f2);
  npy::write(path("s.npy"), npy::Array{{2, 1}, {0.5f, 2.0f}});
  std::ofstream(path("y.npy")) << kPrevious;
  std::string program = " '" + path("dequantize.lj") + "'";
  std::string rest = " --in s=" + path("s.npy") + " --out y=" + path("y.npy") + " --out c=" +
                     path("c.npy");
  expectError(run("run" + program + " --in q=" + path("q_f4.npy") + rest),
              "input 'q' is i8 but " + path("q_f4.npy") +
                  " holds float32 ('<f4'), which is not converted; i8 inputs take int8 ('|i1')");
  expectError(run("run" + program + " --in q=" + path("q_f2.npy") + rest),
              "input 'q' is i8 but " + path("q_f2.npy") + " holds float16 ('<f2')");
  // An int8 file is no float input's either: f32 and bf16 refuse it.
  expectError(run("run" + program + " --in q=" + path("q_i1.npy") + " --in s=" +
                  path("q_i1.npy") + " --out y=" + path("y.npy") + " --out c=" + path("c.npy")),
              "input 's' is f32 but " + path("q_i1.npy") +
                  " holds int8 ('|i1'), which is not converted; f32 inputs take float32 ('<f4')");
  std::ofstream(path("bf16.lj")) << print(bf16Product());
  npy::write(path("g_bf16.npy"), columnFactors(DType::BF16));
  expectError(run("run '" + path("bf16.lj") + "' --in x=" + path("q_i1.npy") + " --in g=" +
                  path("g_bf16.npy") + " --out y=" + path("y.npy") + " --out z=" + path("z.npy")),
              "input 'x' is bf16 but " + path("q_i1.npy") + " holds int8 ('|i1')");
  expectUntouched(path("y.npy"));
  EXPECT_FALSE(fs::exists(path("c.npy")));
  EXPECT_FALSE(fs::exists(path("z.npy")));
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

TEST_F(Cli, DumpColsPrintsTheEntrySpecialisedForThatC) {
  Result generic = run("dump --stage=llvm lib:rmsnorm");
  Result c65 = run("dump --stage=llvm --cols 65 lib:rmsnorm");
  ASSERT_EQ(generic.exit_code, 0) << generic.err;
  ASSERT_EQ(c65.exit_code, 0) << c65.err;
  EXPECT_NE(c65.out.find("_c65("), std::string::npos) << c65.out;
  EXPECT_EQ(generic.out.find("_c65("), std::string::npos);
  expectError(run("dump --stage=llvm --cols 5000 lib:rmsnorm"), "1 to 1024 columns, not 5000");
  expectError(run("dump --stage=plan --cols 8 lib:rmsnorm"), "only the code stages");
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

TEST_F(Cli, ABadOutputPathLeavesEveryOutputUntouched) {
  // y sorts before z: a command that wrote as it went would replace y first.
  std::string in = saveProgram(pair(), check::makeCase(pair(), {4, 8}));
  std::ofstream(path("y.npy")) << kPrevious;
  fs::create_directories(path("dir"));
  const std::pair<std::string, std::string> bad[] = {
      {path("no/such/dir/z.npy"), "/no/such/dir does not exist"},
      {path("dir"), "dir: is a directory"},
      {path("y.npy/z.npy"), "y.npy is not a directory"},
      {"/dev/full", "/dev/full: is not a regular file"}};
  for (const auto &[file, phrase] : bad) {
    SCOPED_TRACE(file);
    expectError(run("run" + in + " --out y=" + path("y.npy") + " --out z=" + file), phrase);
    expectUntouched(path("y.npy"));
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_EQ(temporaryFiles(), std::vector<std::string>{});
}

TEST_F(Cli, AFailedCompileOrBindLeavesTheOutputUntouched) {
  check::Case c = check::makeCase(library::swiglu(), {2, 9});
  std::string in = saveInputs(c), out = " --out y=" + path("y.npy");
  std::ofstream(path("y.npy")) << kPrevious;
  expectError(run("run --lanes 5 lib:swiglu" + in + out), "lanes must be 4, 8 or 16");
  npy::write(path("u.npy"), npy::Array{{2, 8}, std::vector<float>(16, 1.0f)});
  expectError(run("run lib:swiglu" + in + out), "u");
  expectUntouched(path("y.npy"));
}

TEST_F(Cli, TheSameFileTwiceAsOutputIsRejected) {
  std::string in = saveProgram(pair(), check::makeCase(pair(), {4, 8}));
  expectError(run("run" + in + " --out y=" + path("o.npy") + " --out z=" + path("o.npy")),
              "o.npy: named twice as an output");
  EXPECT_FALSE(fs::exists(path("o.npy")));
  // Other spellings of one file: through "..", and a hard link.
  fs::create_directories(path("dir"));
  expectError(run("run" + in + " --out y=" + path("o.npy") + " --out z=" + path("dir/../o.npy")),
              "is the same file as output");
  EXPECT_FALSE(fs::exists(path("o.npy")));
  std::ofstream(path("o.npy")) << kPrevious;
  fs::create_hard_link(path("o.npy"), path("link.npy"));
  expectError(run("run" + in + " --out y=" + path("o.npy") + " --out z=" + path("link.npy")),
              "link.npy: is the same file as output");
  expectUntouched(path("o.npy"));
}

TEST_F(Cli, AnInputAsOutputIsRejected) {
  std::string in = saveProgram(pair(), check::makeCase(pair(), {4, 8}));
  std::string x = test::slurp(path("x.npy")), program = test::slurp(path("pair.lj"));
  expectError(run("run" + in + " --out y=" + path("x.npy") + " --out z=" + path("z.npy")),
              "x.npy: is also an input");
  expectError(run("run" + in + " --out y=" + path("y.npy") + " --out z=" + path("pair.lj")),
              "pair.lj: is also an input");
  EXPECT_EQ(test::slurp(path("x.npy")), x);
  EXPECT_EQ(test::slurp(path("pair.lj")), program);
  EXPECT_FALSE(fs::exists(path("y.npy")));
  EXPECT_FALSE(fs::exists(path("z.npy")));
}

TEST_F(Cli, AFailedWriteLeavesThePreviousFileAndNoTemporaryFile) {
#ifdef __SANITIZE_THREAD__
  // TSan's runtime itself faults (SIGBUS) under a file-size limit; the
  // in-process StagedFiles tests cover the failed write under TSan.
  GTEST_SKIP() << "ulimit -f kills ThreadSanitizer's runtime";
#endif
  // 64 x 256 floats: 64 KB, well over the 4 KB the limit allows.
  check::Case c = check::makeCase(library::swiglu(), {64, 256});
  std::string args = "run lib:swiglu" + saveInputs(c) + " --out y=" + path("y.npy");
  std::ofstream(path("y.npy")) << kPrevious;
  expectError(runWithFileSizeLimit(args, 8), "y.npy: cannot write: File too large");
  expectUntouched(path("y.npy"));
  EXPECT_EQ(temporaryFiles(), std::vector<std::string>{});
  // The same command without the limit replaces the file.
  ASSERT_EQ(run(args).exit_code, 0);
  expectOutputMatches(c, 0, path("y.npy"));
  EXPECT_EQ(temporaryFiles(), std::vector<std::string>{});
}

TEST_F(Cli, OutputsReplaceFilesThroughSymbolicLinksAndKeepTheirMode) {
  check::Case c = check::makeCase(library::swiglu(), {2, 9});
  std::ofstream(path("real.npy")) << kPrevious;
  fs::permissions(path("real.npy"),
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink(path("real.npy"), path("link.npy"));
  ASSERT_EQ(run("run lib:swiglu" + saveInputs(c) + " --out y=" + path("link.npy")).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(path("link.npy")));
  expectOutputMatches(c, 0, path("real.npy"));
  EXPECT_EQ(fs::status(path("real.npy")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(Cli, HelpExitsZero) {
  Result result = run("--help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("run"), std::string::npos);
}

} // namespace
} // namespace lanejit
