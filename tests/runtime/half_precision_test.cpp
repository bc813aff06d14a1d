// bf16 and f16 buffers in kernels: a load widens exactly, a write rounds
// once to nearest-even, with the bits of lanejit/element_types.h (whose own
// test checks them against independent definitions).
//
//  - Every one of the 2^16 patterns of each type through a kernel: T -> T,
//    T -> f32, and f32 -> T on every halfway case and a stride through the
//    f32 patterns; at W = 4, 8 and 16, with full packets and tails, on 1 and
//    2 threads, with streaming stores, without F16C, without AVX512_BF16,
//    and rows across lanes; and every f32 denormal stored to bf16.
//  - The six library operators with every buffer in bf16 and in f16: within
//    the oracle's tolerance plus one unit in the output's last place, inputs
//    unchanged, guard zones intact, the same bits for every W, thread count
//    and switch setting tried.
//  - Aliasing: a bf16 output that is its input runs in place; an input that
//    overlaps an output of another element type is staged.
#include "support/output_bits.h"
#include "support/testing.h"

#include "kernel/kernel_impl.h"
#include "launch/row_launch.h"

#include <lanejit/element_types.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace lanejit {
namespace {

using test::Outputs;
using test::outputsOf;
using test::sameBits;

constexpr DType kHalfTypes[] = {DType::BF16, DType::F16};
constexpr int kLanes[] = {4, 8, 16};

std::string typeName(DType t) { return std::string(name(t)); }

// y = x with x of type `in` and y of type `out`.
Program copyProgram(DType in, DType out) {
  return parse("program copy {\n  in x: " + typeName(in) + "[R, C]\n  out y: " + typeName(out) +
               "[R, C]\n  %0 = load x[0:C]\n  y[0:C] = %0\n}\n");
}

uint16_t roundTo(DType t, float x) { return t == DType::BF16 ? roundToBF16(x) : roundToF16(x); }
float widen(DType t, uint16_t h) { return t == DType::BF16 ? widenBF16(h) : widenF16(h); }

// What a kernel stores for the f32 value x in an output of type t.
uint32_t storedBits(DType t, float x) {
  if (t != DType::F32)
    return roundTo(t, x);
  return std::isnan(x) ? test::kCanonicalNaN : std::bit_cast<uint32_t>(x);
}

// Runs `kernel` on `values` (of type `in`), laid out `cols` to a row with
// the last row padded by zeros, and returns each output element's bits.
std::vector<uint32_t> runOn(const Kernel &kernel, DType in, DType out,
                            const std::vector<uint32_t> &values, int64_t cols, int threads) {
  int64_t rows = (static_cast<int64_t>(values.size()) + cols - 1) / cols;
  int64_t inBytes = bytesOf(in), outBytes = bytesOf(out);
  std::vector<unsigned char> x(static_cast<size_t>(rows * cols * inBytes), 0);
  std::vector<unsigned char> y(static_cast<size_t>(rows * cols * outBytes), 0xee);
  for (size_t i = 0; i < values.size(); ++i)
    std::memcpy(x.data() + i * inBytes, &values[i], inBytes); // little-endian low half
  kernel.run({BufferRef::matrix(x.data(), rows, cols)}, {BufferRef::matrix(y.data(), rows, cols)},
             threads);
  std::vector<uint32_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t b = 0;
    std::memcpy(&b, y.data() + i * outBytes, outBytes);
    bits[i] = b;
  }
  return bits;
}

CompileOptions withLanes(int lanes) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  return o;
}

// `o` without a CPU feature ("f16c", "avx512bf16"): 16-bit loads and stores
// convert with integer operations instead (a no-op on a machine without it).
CompileOptions without(CompileOptions o, const std::string &feature) {
  o.target_features += (o.target_features.empty() ? "-" : ",-") + feature;
  return o;
}

// The variants of one W every pattern goes through: default, streaming
// stores from the first byte, no F16C (integer conversions), and the
// generic entry only.
std::vector<std::pair<std::string, CompileOptions>> variants(int lanes) {
  std::vector<std::pair<std::string, CompileOptions>> all;
  all.emplace_back("default", withLanes(lanes));
  CompileOptions streaming = withLanes(lanes);
  streaming.stream_stores = true;
  streaming.stream_min_kib = 0;
  all.emplace_back("streaming stores", streaming);
  all.emplace_back("without F16C", without(withLanes(lanes), "f16c"));
  all.emplace_back("without AVX512_BF16", without(withLanes(lanes), "avx512bf16"));
  CompileOptions generic = withLanes(lanes);
  generic.specialize_columns = false;
  generic.rows_across_lanes = false;
  all.emplace_back("generic entry", generic);
  return all;
}

// Each pattern of `in` through copy kernels to `out`, against `want`.
void expectCopies(DType in, DType out, const std::vector<uint32_t> &values,
                  const std::function<uint32_t(uint32_t)> &want) {
  Program program = copyProgram(in, out);
  for (int lanes : kLanes)
    for (const auto &[label, options] : variants(lanes)) {
      Kernel kernel = compile(program, options);
      for (int64_t cols : {int64_t{256}, int64_t{37}, int64_t{8}, int64_t{3}})
        for (int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message() << name(in) << " -> " << name(out) << " W=" << lanes
                                          << " " << label << " C=" << cols << " threads "
                                          << threads);
          std::vector<uint32_t> got = runOn(kernel, in, out, values, cols, threads);
          for (size_t i = 0; i < values.size(); ++i)
            ASSERT_EQ(got[i], want(values[i])) << std::hex << "input 0x" << values[i];
        }
    }
}

std::vector<uint32_t> everyHalfPattern() {
  std::vector<uint32_t> all(0x10000);
  for (uint32_t h = 0; h < 0x10000; ++h)
    all[h] = h;
  return all;
}

TEST(HalfPrecision, EveryPatternLoadsAndStoresExactly) {
  for (DType t : kHalfTypes) {
    expectCopies(t, t, everyHalfPattern(), [&](uint32_t h) {
      return storedBits(t, widen(t, static_cast<uint16_t>(h)));
    });
    expectCopies(t, DType::F32, everyHalfPattern(), [&](uint32_t h) {
      return storedBits(DType::F32, widen(t, static_cast<uint16_t>(h)));
    });
  }
}

// f32 patterns that exercise rounding to `t`: each halfway case between two
// neighbours and one f32 step either side, and a stride through the rest.
std::vector<uint32_t> roundingCases(DType t) {
  std::vector<uint32_t> cases;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float lo = widen(t, static_cast<uint16_t>(h));
    float hi = widen(t, static_cast<uint16_t>(h + 1));
    if (!std::isfinite(lo) || !std::isfinite(hi) || (h & 0x7fffu) == 0x7fffu)
      continue;
    auto mid = std::bit_cast<uint32_t>(static_cast<float>((double(lo) + double(hi)) / 2));
    for (uint32_t u : {mid - 1, mid, mid + 1})
      cases.push_back(u);
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65537 * 7)
    cases.push_back(static_cast<uint32_t>(u));
  for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7f7fffffu, 0x477ff000u, 0x7fa00000u,
                     0x00000001u, 0x80000001u, 0x33000000u, 0x33000001u})
    cases.push_back(u);
  return cases;
}

TEST(HalfPrecision, EveryHalfwayCaseStoresRoundedToEven) {
  for (DType t : kHalfTypes) {
    std::vector<uint32_t> cases = roundingCases(t);
    expectCopies(DType::F32, t, cases,
                 [&](uint32_t u) { return storedBits(t, test::floatBits(u)); });
  }
}

// vcvtneps2bf16 flushes denormal inputs, which the store corrects for
// (codegen/emit_ops.cpp): every f32 denormal of either sign, each beside
// normal values, zeros and NaNs in its packet, as one long row, at every W.
TEST(HalfPrecision, EveryDenormalStoresToBF16RoundedToEven) {
  std::vector<uint32_t> cases;
  cases.reserve(4u << 23);
  for (uint32_t u = 0; u < (1u << 23); ++u)
    for (uint32_t v : {u, 0x80000000u | u, 0x3f800000u | u, u % 3 ? 0x7fc00001u : 0x80000000u})
      cases.push_back(v);
  Program program = copyProgram(DType::F32, DType::BF16);
  for (int lanes : kLanes)
    for (const CompileOptions &options :
         {withLanes(lanes), without(withLanes(lanes), "avx512bf16")}) {
      SCOPED_TRACE(testing::Message() << "W=" << lanes << " " << options.target_features);
      std::vector<uint32_t> got =
          runOn(compile(program, options), DType::F32, DType::BF16, cases, 4099, 1);
      for (size_t i = 0; i < cases.size(); ++i)
        ASSERT_EQ(got[i], storedBits(DType::BF16, test::floatBits(cases[i])))
            << std::hex << "input 0x" << cases[i];
    }
}

// Runs `kernel` on a fresh copy of `c`'s inputs (outputs NaN first) on
// `threads`, checks it against the oracle and returns its output bytes.
::testing::AssertionResult runChecked(const Kernel &kernel, check::Case &c, int threads,
                                      Outputs &out) {
  for (check::GuardedBuffer &b : c.outputs)
    b.fill(std::numeric_limits<float>::quiet_NaN());
  launch::CallThreads scope(threads);
  ::testing::AssertionResult ok = test::runMatchesReference(kernel, c);
  out = outputsOf(c);
  return ok;
}

// The configurations the library sweep compares: W, and a few switch sets.
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
  all.emplace_back("W=16 without F16C", without(withLanes(16), "f16c"));
  all.emplace_back("W=16 without AVX512_BF16", without(withLanes(16), "avx512bf16"));
  return all;
}

class HalfPrecisionLibrary : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(HalfPrecisionLibrary, MatchesTheOracleWithTheSameBitsEverywhere) {
  const auto &[op, storage] = GetParam();
  Program program = withStorage(library::byName(op), storage);
  for (const Param &p : program.inputs)
    ASSERT_EQ(p.type, storage);
  int64_t m = op == "rope" ? 2 : 1;
  std::vector<std::pair<std::string, CompileOptions>> configs = librarySweep();
  std::vector<Kernel> kernels;
  for (const auto &config : configs)
    kernels.push_back(compile(program, config.second));
  for (Shape shape : {Shape{3, 37 * m}, Shape{17, 65 * m}, Shape{1, 1 * m}, Shape{64, 8 * m},
                      Shape{5, 48 * m}})
    for (int64_t pad : {int64_t{0}, int64_t{3}}) {
      SCOPED_TRACE(testing::Message() << op << " " << name(storage) << " " << shape.rows << "x"
                                      << shape.cols << " pad " << pad);
      check::Case c = check::makeCase(program, shape, check::Fill::Random, 7, pad);
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

INSTANTIATE_TEST_SUITE_P(AllOperators, HalfPrecisionLibrary,
                         ::testing::Combine(::testing::Values("rope", "layernorm", "swiglu",
                                                              "rmsnorm", "gelu_residual",
                                                              "masked_softmax"),
                                            ::testing::ValuesIn(kHalfTypes)),
                         [](const auto &info) {
                           return std::get<0>(info.param) + "_" +
                                  typeName(std::get<1>(info.param));
                         });

TEST(HalfPrecision, FixtureInputsOfTheLibraryMatchTheOracle) {
  for (DType storage : kHalfTypes)
    for (const library::Entry &e : library::all()) {
      SCOPED_TRACE(e.name + " " + typeName(storage));
      int64_t m = e.name == "rope" ? 2 : 1;
      EXPECT_TRUE(test::compileAndCheck(withStorage(e.make(), storage), {33, 130 * m},
                                        test::targetOptions(), check::Fill::Fixture));
    }
}

TEST(HalfPrecision, InPlaceOfTheSameTypeAndStagedAcrossTypes) {
  // y = 2x, y in bf16, x the same buffer: proved in place.
  Program same = parse("program twice {\n  in x: bf16[R, C]\n  out y: bf16[R, C]\n"
                       "  %0 = load x[0:C]\n  %1 = const f32 2\n  %2 = mul %0, %1\n"
                       "  y[0:C] = %2\n}\n");
  Kernel k = compile(same, test::targetOptions());
  std::vector<uint16_t> buffer(5 * 40);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = roundToBF16(static_cast<float>(i) * 0.25f - 7.0f);
  std::vector<uint16_t> original = buffer;
  k.run({BufferRef::matrix(buffer.data(), 5, 40)}, {BufferRef::matrix(buffer.data(), 5, 40)});
  for (size_t i = 0; i < buffer.size(); ++i)
    ASSERT_EQ(buffer[i], roundToBF16(2 * widenBF16(original[i]))) << i;

  // An f32 output over a bf16 input's bytes: each write would land on input
  // elements not yet read, so the input must be read from a copy.
  Program widening = parse("program widen {\n  in x: bf16[R, C]\n  out y: f32[R, C]\n"
                           "  %0 = load x[0:C]\n  %1 = const f32 3\n  %2 = mul %0, %1\n"
                           "  y[0:C] = %2\n}\n");
  Kernel w = compile(widening, test::targetOptions());
  for (int64_t rows : {1, 4}) {
    const int64_t cols = 24;
    std::vector<float> storage(static_cast<size_t>(rows * cols), 0.0f);
    auto *x = reinterpret_cast<uint16_t *>(storage.data());
    std::vector<uint16_t> in(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < in.size(); ++i)
      x[i] = in[i] = roundToBF16(static_cast<float>(i) - 11.5f);
    w.run({BufferRef::matrix(x, rows, cols)}, {BufferRef::matrix(storage.data(), rows, cols)});
    for (size_t i = 0; i < in.size(); ++i)
      ASSERT_EQ(storage[i], 3 * widenBF16(in[i])) << rows << " rows, element " << i;
  }
}

TEST(HalfPrecision, ScalarAndColumnInputsOfEachType) {
  Program p = parse("program mixed {\n  in x: bf16[R, C]\n  in g: f16[C]\n  in eps: bf16\n"
                    "  in b: f32[C]\n  out y: f16[R, C]\n  out z: bf16[R, C]\n"
                    "  %0 = load x[0:C]\n  %1 = load g[0:C]\n  %2 = load eps\n  %3 = load b[0:C]\n"
                    "  %4 = mul %0, %1\n  %5 = add %4, %2\n  y[0:C] = %5\n"
                    "  %6 = reduce.sum %0\n  %7 = add %3, %6\n  z[0:C] = %7\n}\n");
  for (int lanes : kLanes)
    for (int64_t cols : {1, 7, 16, 50}) {
      SCOPED_TRACE(testing::Message() << "W=" << lanes << " C=" << cols);
      EXPECT_TRUE(test::compileAndCheck(p, {9, cols}, withLanes(lanes)));
    }
}

} // namespace
} // namespace lanejit
