// i8 buffers and int8 row quantization in kernels.
//
//  - Every i8 pattern loads exactly; f32 values store as lanejit::roundToI8
//    gives them (nearest-even, saturated to +-127, NaN as 0) on every
//    halfway case from -130.5 to 130.5, their neighbours, infinities, NaNs
//    and a stride through the f32 patterns; at W = 4, 8 and 16, full
//    packets and tails, 1 and 2 threads, streaming stores, the generic
//    entry.
//  - The quantizing library entries (quantize_q8, rmsnorm_q8 per row;
//    quantize_q8_0, rmsnorm_q8_0 per block of 32), in f32 and bf16: within
//    the oracle (one step of the values), inputs unchanged, the same bits
//    for every W, thread count and switch set tried; fused RMSNorm -> int8
//    is bit for bit RMSNorm then quantize.
//  - Rows that are all zero, hold a NaN or an infinity, and quantizeRows
//    after another row program; Q8_0 scales are the f16 of the f32 scale.
#include "support/output_bits.h"
#include "support/testing.h"

#include "launch/row_launch.h"

#include <lanejit/dsl.h>
#include <lanejit/element_types.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace lanejit {
namespace {

using test::Outputs;
using test::outputsOf;
using test::sameBits;

constexpr int kLanes[] = {4, 8, 16};

Program copyProgram(DType in, DType out) {
  return parse("program copy {\n  in x: " + std::string(name(in)) + "[R, C]\n  out y: " +
               std::string(name(out)) + "[R, C]\n  %0 = load x[0:C]\n  y[0:C] = %0\n}\n");
}

CompileOptions withLanes(int lanes) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  return o;
}

std::vector<std::pair<std::string, CompileOptions>> variants(int lanes) {
  std::vector<std::pair<std::string, CompileOptions>> all;
  all.emplace_back("default", withLanes(lanes));
  CompileOptions streaming = withLanes(lanes);
  streaming.stream_stores = true;
  streaming.stream_min_kib = 0;
  all.emplace_back("streaming stores", streaming);
  CompileOptions generic = withLanes(lanes);
  generic.specialize_columns = false;
  generic.rows_across_lanes = false;
  all.emplace_back("generic entry", generic);
  return all;
}

// Copies `values` (elements of `in`, as bytes) through kernels of every
// variant into an `out` buffer, `cols` to a row, and compares each output
// element's bytes with `want`.
template <typename In, typename Out>
void expectCopies(DType in, DType out, const std::vector<In> &values, Out (*want)(In)) {
  Program program = copyProgram(in, out);
  for (int lanes : kLanes)
    for (const auto &[label, options] : variants(lanes)) {
      Kernel kernel = compile(program, options);
      for (int64_t cols : {int64_t{256}, int64_t{37}, int64_t{8}, int64_t{3}})
        for (int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message() << name(in) << " -> " << name(out) << " W=" << lanes
                                          << " " << label << " C=" << cols << " threads "
                                          << threads);
          int64_t rows = (static_cast<int64_t>(values.size()) + cols - 1) / cols;
          std::vector<In> x(static_cast<size_t>(rows * cols), In{});
          std::copy(values.begin(), values.end(), x.begin());
          std::vector<Out> y(x.size());
          std::memset(y.data(), 0xee, y.size() * sizeof(Out));
          kernel.run({BufferRef::matrix(x.data(), rows, cols)},
                     {BufferRef::matrix(y.data(), rows, cols)}, threads);
          for (size_t i = 0; i < values.size(); ++i) {
            Out expected = want(values[i]);
            ASSERT_EQ(std::memcmp(&y[i], &expected, sizeof(Out)), 0)
                << "element " << i << ": got " << +y[i] << ", want " << +expected;
          }
        }
    }
}

float widenI8(int8_t q) { return q; }
int8_t storeI8(float x) { return roundToI8(x); }
int8_t copyI8(int8_t q) { return roundToI8(q); }

TEST(Int8, EveryPatternLoadsExactly) {
  std::vector<int8_t> all;
  for (int q = -128; q <= 127; ++q)
    all.push_back(static_cast<int8_t>(q));
  expectCopies<int8_t, float>(DType::I8, DType::F32, all, widenI8);
  // -128 loads as -128 and stores saturated, as -127.
  expectCopies<int8_t, int8_t>(DType::I8, DType::I8, all, copyI8);
  EXPECT_EQ(copyI8(-128), -127);
}

// Each halfway case k + 0.5 in [-130.5, 130.5] and one f32 step either
// side, the integers, special values and a stride through all patterns.
std::vector<float> roundingCases() {
  std::vector<float> cases;
  for (int k = -131; k <= 130; ++k) {
    float half = static_cast<float>(k) + 0.5f;
    for (float x : {std::nextafter(half, -1e9f), half, std::nextafter(half, 1e9f),
                    static_cast<float>(k)})
      cases.push_back(x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, inf, -inf, 1e30f, -1e30f, 127.49998f,
                  -127.49998f, 127.5f, -127.5f, 128.0f, -128.0f, -129.0f})
    cases.push_back(x);
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffbfffffu})
    cases.push_back(std::bit_cast<float>(nan));
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65537 * 7)
    cases.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  return cases;
}

TEST(Int8, StoresRoundToNearestEvenAndSaturate) {
  expectCopies<float, int8_t>(DType::F32, DType::I8, roundingCases(), storeI8);
  EXPECT_EQ(roundToI8(2.5f), 2);
  EXPECT_EQ(roundToI8(3.5f), 4);
  EXPECT_EQ(roundToI8(-2.5f), -2);
  EXPECT_EQ(roundToI8(-0.5f), 0);
  EXPECT_EQ(roundToI8(126.5f), 126);
  EXPECT_EQ(roundToI8(300.0f), 127);
  EXPECT_EQ(roundToI8(-300.0f), -127);
  EXPECT_EQ(roundToI8(std::numeric_limits<float>::quiet_NaN()), 0);
}

::testing::AssertionResult runChecked(const Kernel &kernel, check::Case &c, int threads,
                                      Outputs &out) {
  for (check::GuardedBuffer &b : c.outputs)
    std::memset(b.raw(), 0x80, static_cast<size_t>(b.bytes()));
  launch::CallThreads scope(threads);
  ::testing::AssertionResult ok = test::runMatchesReference(kernel, c);
  out = outputsOf(c);
  return ok;
}

std::vector<std::pair<std::string, CompileOptions>> librarySweep() {
  std::vector<std::pair<std::string, CompileOptions>> all;
  for (int lanes : kLanes) {
    all.emplace_back("W=" + std::to_string(lanes), withLanes(lanes));
    CompileOptions off = withLanes(lanes);
    off.fuse_pointwise = off.fuse_reductions = off.fuse_outputs = false;
    off.specialize_full_packets = off.specialize_columns = off.rows_across_lanes = false;
    off.inline_packet_bodies = CompileOptions::Inline::Never;
    all.emplace_back("W=" + std::to_string(lanes) + " unfused, generic", off);
  }
  CompileOptions streaming = withLanes(16);
  streaming.stream_stores = true;
  streaming.stream_min_kib = 0;
  all.emplace_back("W=16 streaming stores", streaming);
  return all;
}

class QuantizingLibrary : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(QuantizingLibrary, MatchesTheOracleWithTheSameBitsEverywhere) {
  const auto &[op, storage] = GetParam();
  Program program = withStorage(library::byName(op), storage);
  ASSERT_EQ(program.outputs.at(program.outputIndex("q")).type, DType::I8);
  std::vector<std::pair<std::string, CompileOptions>> configs = librarySweep();
  std::vector<Kernel> kernels;
  for (const auto &config : configs)
    kernels.push_back(compile(program, config.second));
  std::vector<Shape> shapes = {{3, 37}, {17, 65}, {1, 1}, {64, 8}, {5, 4096}};
  if (op.ends_with("_0")) // whole blocks of 32
    shapes = {{3, 32}, {17, 64}, {1, 32}, {64, 96}, {5, 4096}, {2, 32 * 37}};
  for (Shape shape : shapes)
    for (int64_t pad : {int64_t{0}, int64_t{3}}) {
      SCOPED_TRACE(testing::Message() << op << " " << name(storage) << " " << shape.rows << "x"
                                      << shape.cols << " pad " << pad);
      check::Case c = check::makeCase(program, shape, check::Fill::Random, 11, pad);
      Outputs want;
      ASSERT_TRUE(runChecked(kernels[0], c, 1, want)) << configs[0].first;
      for (size_t k = 0; k < kernels.size(); ++k)
        for (int threads : {1, 2}) {
          Outputs got;
          ASSERT_TRUE(runChecked(kernels[k], c, threads, got)) << configs[k].first;
          ASSERT_TRUE(sameBits(got, want)) << configs[k].first << " threads " << threads;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Entries, QuantizingLibrary,
                         ::testing::Combine(::testing::Values("quantize_q8", "rmsnorm_q8",
                                                              "quantize_q8_0", "rmsnorm_q8_0"),
                                            ::testing::Values(DType::F32, DType::BF16)),
                         [](const auto &info) {
                           return std::get<0>(info.param) + "_" +
                                  std::string(name(std::get<1>(info.param)));
                         });

// Quantizes `x` (rows x cols, f32) with quantize_q8; returns q and scale.
struct Quantized {
  std::vector<int8_t> q;
  std::vector<float> scale;
};
Quantized quantize(const Kernel &kernel, std::vector<float> x, int64_t rows, int64_t cols) {
  Quantized out{std::vector<int8_t>(x.size()), std::vector<float>(static_cast<size_t>(rows))};
  kernel.run({BufferRef::matrix(x.data(), rows, cols)},
             {BufferRef::matrix(out.q.data(), rows, cols),
              BufferRef::matrix(out.scale.data(), rows, 1)});
  return out;
}

TEST(Int8, FusedRmsNormQuantizeIsRmsNormThenQuantize) {
  const int64_t rows = 9, cols = 1024;
  Kernel norm = compile(library::rmsNorm(), test::targetOptions());
  for (bool blocks : {false, true}) {
    SCOPED_TRACE(blocks ? "per block" : "per row");
    Program fusedProgram = blocks ? library::rmsNormQ8_0() : library::rmsNormQ8();
    check::Case c = check::makeCase(fusedProgram, {rows, cols}, check::Fill::Random, 3);
    std::vector<float> y(static_cast<size_t>(rows * cols));
    std::vector<BufferRef> normOut = {BufferRef::matrix(y.data(), rows, cols)};
    norm.run(c.inputRefs(), normOut);
    check::Case pair = check::makeCase(blocks ? library::quantizeQ8_0() : library::quantizeQ8(),
                                       {rows, cols}, check::Fill::Random, 3);
    std::memcpy(pair.inputs[0].raw(), y.data(), 4 * y.size());
    compile(pair.program, test::targetOptions()).run(pair.inputRefs(), pair.outputRefs());
    compile(fusedProgram, test::targetOptions()).run(c.inputRefs(), c.outputRefs());
    for (size_t o = 0; o < 2; ++o)
      ASSERT_EQ(c.outputs[o].hash(), pair.outputs[o].hash()) << c.program.outputs[o].name;
  }
}

TEST(Int8, Q8_0BlocksHaveTheirOwnScales) {
  // Row 0: block b holds b+1 at column 0 of the block and small values;
  // block 2 is zero; row 1: a NaN in block 1 and an infinity in block 3.
  const int64_t cols = 128;
  std::vector<float> x(2 * cols, 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    int64_t block = j / 32;
    if (block != 2)
      x[j] = j % 32 == 0 ? -float(block + 1) : float(j % 32) / 64.0f;
    x[cols + j] = float(j % 7) - 3.0f;
  }
  x[cols + 40] = std::numeric_limits<float>::quiet_NaN();
  x[cols + 100] = std::numeric_limits<float>::infinity();
  for (int lanes : kLanes) {
    SCOPED_TRACE(lanes);
    std::vector<int8_t> q(x.size());
    std::vector<uint16_t> d(2 * cols / 32);
    compile(library::quantizeQ8_0(), withLanes(lanes))
        .run({BufferRef::matrix(x.data(), 2, cols)},
             {BufferRef::matrix(q.data(), 2, cols), BufferRef::matrix(d.data(), 2, cols / 32)});
    for (int64_t block : {0, 1, 3}) {
      float absmax = float(block + 1);
      EXPECT_EQ(d[block], roundToF16(absmax / 127.0f)) << block;
      EXPECT_EQ(q[block * 32], -127);
      for (int64_t j = 1; j < 32; ++j)
        EXPECT_EQ(q[block * 32 + j], roundToI8(x[block * 32 + j] * (127.0f / absmax)));
    }
    EXPECT_EQ(d[2], 0); // a zero block: +0 scale, zero values
    for (int64_t j = 64; j < 96; ++j)
      EXPECT_EQ(q[j], 0);
    EXPECT_EQ(d[4], roundToF16(3.0f / 127.0f));
    EXPECT_EQ(d[5], kCanonicalNaNF16);
    EXPECT_EQ(d[7], 0x7c00); // +inf
    for (int64_t j = 32; j < 64; ++j)
      EXPECT_EQ(q[cols + j], 0);
  }
}

TEST(Int8, ZeroNaNAndInfiniteRows) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t cols = 40;
  std::vector<float> x(4 * cols, 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    x[cols + j] = static_cast<float>(j) - 20.0f; // max |x| = 20 at column 0
    x[2 * cols + j] = static_cast<float>(j);
    x[3 * cols + j] = static_cast<float>(j);
  }
  x[2 * cols + 7] = nan;
  x[3 * cols + 9] = -inf;
  for (int lanes : kLanes) {
    SCOPED_TRACE(lanes);
    Quantized out = quantize(compile(library::quantizeQ8(), withLanes(lanes)), x, 4, cols);
    EXPECT_EQ(std::bit_cast<uint32_t>(out.scale[0]), 0u); // a zero row: scale +0, values 0
    EXPECT_EQ(out.scale[1], 20.0f / 127.0f);
    EXPECT_EQ(out.q[cols + 0], -127); // the largest magnitude maps to +-127 exactly
    EXPECT_EQ(out.q[cols + 30], roundToI8(10.0f * (127.0f / 20.0f)));
    EXPECT_TRUE(std::isnan(out.scale[2])); // a NaN shows in the scale; its values store 0
    EXPECT_EQ(out.scale[3], inf);          // so does an infinity
    for (int64_t j = 0; j < cols; ++j) {
      EXPECT_EQ(out.q[j], 0);
      EXPECT_EQ(out.q[2 * cols + j], 0);
      EXPECT_EQ(out.q[3 * cols + j], 0); // finite * 0, and -inf * 0 = NaN: both 0
    }
  }
}

TEST(Int8, QuantizeRowsFusesAfterAnyRowProgram) {
  ProgramBuilder b("layernorm_q8");
  Expr x = b.rows("x", DType::BF16), gamma = b.columns("gamma"), beta = b.columns("beta");
  Expr d = x - mean(x);
  library::quantizeRows(b, d * rsqrt(mean(d * d) + 1e-5f) * gamma + beta, "values", "scales");
  Program p = b.build();
  EXPECT_EQ(p.outputs[0].type, DType::I8);
  EXPECT_EQ(p.outputs[1].cols, Dim(1));
  for (int lanes : kLanes)
    for (int64_t cols : {3, 64, 515}) {
      SCOPED_TRACE(testing::Message() << "W=" << lanes << " C=" << cols);
      EXPECT_TRUE(test::compileAndCheck(p, {21, cols}, withLanes(lanes), check::Fill::Random));
    }
}

TEST(Int8, TextFormatRoundTrips) {
  Program p = parse("program dequantize {\n  in q: i8[R, C]\n  in s: f32[R, 1]\n"
                    "  out y: f32[R, C]\n  %0 = load q[0:C]\n  %1 = load s[0:1]\n"
                    "  %2 = reduce.max %1\n  %3 = mul %0, %2\n  y[0:C] = %3\n}\n");
  EXPECT_EQ(p.inputs[0].type, DType::I8);
  EXPECT_EQ(parse(print(p)).hash(), p.hash());
  EXPECT_EQ(print(library::rmsNormQ8()).find("out q: i8[R, C]") != std::string::npos, true);
  EXPECT_TRUE(test::compileAndCheck(p, {6, 50}, test::targetOptions(), check::Fill::Random));
}

} // namespace
} // namespace lanejit
