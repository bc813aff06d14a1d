// tests/support/testing.h — GoogleTest helpers on top of lanejit/check.h.
//
//   check::Case c = check::makeCase(library::swiglu(), {17, 65});
//   EXPECT_TRUE(test::runMatchesReference(kernel, c));
//
// Each helper returns an AssertionResult whose message says what failed
// (first bad element, damaged guard, changed input), so EXPECT_TRUE points
// at the caller's line.
#pragma once

#include <lanejit/check.h>
#include <lanejit/kernel.h>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace lanejit::test {

// Every output of `c` is within tolerance of the FP64 oracle.
::testing::AssertionResult matchesReference(const check::Case &c);

// Runs `kernel` on the case's buffers, then checks: outputs match the oracle,
// inputs unchanged, guard zones intact.
::testing::AssertionResult runMatchesReference(const Kernel &kernel, check::Case &c);

// The same for a fresh case: makeCase, compile with `options`, run, check.
::testing::AssertionResult
compileAndCheck(const Program &program, Shape shape,
                const CompileOptions &options = CompileOptions::fromEnvironment(),
                check::Fill fill = check::Fill::Random, uint64_t seed = 1,
                int64_t row_stride_pad = 0);

// `a` and `b`, kernels of one program compiled two ways (a switch on and
// off), each run on a fresh random case of `shape` (rows padded by
// `row_stride_pad`, inputs from `seed`): both match the oracle (as
// runMatchesReference) and their outputs are bitwise equal.
::testing::AssertionResult sameBitsOnCase(const Kernel &a, const Kernel &b, const Program &program,
                                          Shape shape, int64_t row_stride_pad, uint64_t seed);
// sameBitsOnCase over every tail: 1 .. 2 * lanes + 1 columns (times
// `multiple`: 2 for RoPE), 1 and 3 rows, each row padding in `pads`; then
// `longRows` (padding 5). The sweep of a switch that may not change a bit.
::testing::AssertionResult sameBitsOverTails(const Kernel &a, const Kernel &b,
                                             const Program &program, int lanes, int64_t multiple,
                                             std::initializer_list<int64_t> pads, Shape longRows);

// Column counts whose tails cover 0 .. 2W+1 lanes for every W <= max_lanes,
// plus a few multi-packet sizes. Every count is a multiple of `multiple`
// (2 for RoPE: then C/2 sweeps the tails).
// Two single-input programs for in-place tests (C a multiple of 4):
// writeAhead — y[:, :C/2] = 2 x[:, :C/2], y[:, C/2:] = 3 x[:, C/4:3C/4]; in
//   one traversal, packet j writes y[C/2 + j] before packet j + C/4 reads
//   it as x: unsafe in place, so guarded;
// writeBehind — y[:, :C/2] = 2 x[:, C/4:3C/4]: every write trails its read,
//   so proved safe in place.
Program writeAheadProgram();
Program writeBehindProgram();

std::vector<int64_t> sweepColumns(int max_lanes = 16, int64_t multiple = 1);
// sweepColumns paired with a cycle of row counts (1, 2, 3, 5, 17).
std::vector<Shape> sweepShapes(int max_lanes = 16, int64_t multiple = 1);

// The message of the Error(Kind::Verify) that `make` throws, or "no error".
std::string verifyErrorOf(const std::function<void()> &make);

// Every switch at its default, but the target the environment names
// (LANEJIT_TARGET_CPU, LANEJIT_TARGET_FEATURES): what explicit sweeps start
// from, so ctest's avx2: pass (tests/CMakeLists.txt) runs them on AVX2 code.
CompileOptions targetOptions();

// The one NaN a kernel writes (docs/switches.md, "NaN results"), and a
// float from its bits.
constexpr uint32_t kCanonicalNaN = 0xffc00000u;
inline float floatBits(uint32_t u) {
  return std::bit_cast<float>(u);
}

// How many times `needle` occurs in `text`.
size_t countOccurrences(const std::string &text, const std::string &needle);
// Whether `part` occurs in `text`.
inline bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace lanejit::test
