// Compile time stays near-linear on large legal programs: hundreds of
// single-column writes to one output, and a chain of two thousand tanh
// (long blocks are split for the code generator, src/jit/split_long_blocks.h).
// The limit is CPU time, so a loaded machine does not trip it. Outputs
// are checked against the FP64 oracle as for any kernel.
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <ctime>
#include <sstream>

namespace lanejit {
namespace {

// After the fix the largest of these takes about 5 s of CPU (the tanh chain)
// and the writes under 1 s; before it, 600 writes took 28 s and 1000 forced
// inline did not finish in 300 s. The bound guards against that kind of
// blow-up, not speed: the tanh chain took 21-24 s of CPU on an AVX2 Zen 3
// (W = 8) while another build shared its two cores, so the bound is 60 s,
// and 3x that in sanitizer builds (21.8 s under ASan on a loaded machine).
#ifdef LANEJIT_SANITIZED
constexpr double kLimitCpuSeconds = 180;
#else
constexpr double kLimitCpuSeconds = 60;
#endif

// y[:, i:i+1] = x[:, i:i+1] * 1.5 for i < n: n writes in one traversal.
std::string manyWrites(int n) {
  std::ostringstream s;
  s << "program many_writes {\n  in x: f32[R, " << n << "]\n  out y: f32[R, " << n
    << "]\n  %k = const f32 1.5\n";
  for (int i = 0; i < n; ++i)
    s << "  %l" << i << " = load x[" << i << ":" << i + 1 << "]\n  %m" << i << " = mul %l" << i
      << ", %k\n  y[" << i << ":" << i + 1 << "] = %m" << i << "\n";
  s << "}\n";
  return s.str();
}

// y = tanh(tanh(... tanh(x))), n deep: one packet body of n inline expansions.
std::string tanhChain(int n) {
  std::ostringstream s;
  s << "program tanh_chain {\n  in x: f32[R, C]\n  out y: f32[R, C]\n  %t0 = load x[0:C]\n";
  for (int i = 0; i < n; ++i)
    s << "  %t" << i + 1 << " = tanh %t" << i << "\n";
  s << "  y[0:C] = %t" << n << "\n}\n";
  return s.str();
}

// Compiles under the CPU-time limit, then checks the kernel on `shape`.
void compileAndCheck(const std::string &text, Shape shape, const CompileOptions &options) {
  Program program = parse(text);
  std::clock_t start = std::clock();
  Kernel kernel = compile(program, options);
  double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  std::cout << "[ info     ] " << program.name << " (" << program.writes.size() << " writes) O"
            << options.opt_level << ": compiled in " << seconds << " s CPU\n";
  EXPECT_LT(seconds, kLimitCpuSeconds) << "compile time of " << program.name;
  check::Case c = check::makeCase(program, shape, check::Fill::Random, 7);
  EXPECT_TRUE(test::runMatchesReference(kernel, c));
}

CompileOptions at(int optLevel) {
  CompileOptions o = CompileOptions::fromEnvironment();
  o.opt_level = optLevel;
  return o;
}

// The cost rule inlines up to about 680 such writes into the row loop,
// which LLVM then unrolls: the largest blocks a default compile makes.
TEST(CompileScale, SixHundredSingleColumnWritesInlinedByTheCostRule) {
  compileAndCheck(manyWrites(600), {3, 600}, at(2));
}

TEST(CompileScale, AThousandSingleColumnWritesForcedInline) {
  CompileOptions o = at(2);
  o.inline_packet_bodies = CompileOptions::Inline::Always;
  compileAndCheck(manyWrites(1000), {3, 1000}, o);
}

TEST(CompileScale, AThousandSingleColumnWritesInHelpersAtOptLevelZero) {
  CompileOptions o = at(0);
  o.inline_packet_bodies = CompileOptions::Inline::Never;
  compileAndCheck(manyWrites(1000), {3, 1000}, o);
}

TEST(CompileScale, ATanhChainTwoThousandDeep) {
  compileAndCheck(tanhChain(2000), {3, 2 * 16 + 5}, at(2));
}

} // namespace
} // namespace lanejit
