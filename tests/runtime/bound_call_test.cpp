// Kernel::bind and run()'s last-call memory: bound calls give run()'s bits,
// errors come at bind time, changed shapes or pointers are re-checked, and
// aliased buffers keep their safe paths (exact aliasing guarded by the
// entry, partial overlap copied at every call, never assumed distinct).
#include "support/testing.h"

#include <lanejit/check.h>
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace lanejit {
namespace {

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * std::sin(0.37f * static_cast<float>(i));
  return v;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every library kernel at tails 0 .. 2W+1: a bound call writes run()'s bits
// and matches the oracle.
TEST(BoundCall, GivesRunsBitsOnEveryTail) {
  for (const library::Entry &e : library::all()) {
    Kernel k = compile(e.make(), test::targetOptions());
    for (int64_t cols : test::sweepColumns(16, 2)) {
      SCOPED_TRACE(e.name + " C=" + std::to_string(cols));
      check::Case viaRun = check::makeCase(k.program(), {5, cols}, check::Fill::Random, 7);
      check::Case viaBind = check::makeCase(k.program(), {5, cols}, check::Fill::Random, 7);
      k.run(viaRun.inputRefs(), viaRun.outputRefs());
      BoundCall call = k.bind(viaBind.inputRefs(), viaBind.outputRefs());
      call();
      call(); // a second call on the same buffers
      EXPECT_TRUE(test::matchesReference(viaBind));
      for (size_t o = 0; o < viaRun.outputs.size(); ++o)
        EXPECT_EQ(check::hashBytes(viaRun.outputs[o].data(),
                                   viaRun.outputs[o].rows() * viaRun.outputs[o].rowStride() * 4),
                  check::hashBytes(viaBind.outputs[o].data(),
                                   viaBind.outputs[o].rows() * viaBind.outputs[o].rowStride() * 4));
    }
  }
}

TEST(BoundCall, ErrorsComeAtBindTime) {
  Kernel k = compile(library::layerNorm(), test::targetOptions());
  std::vector<float> x(4 * 10), g(10), b(9), y(4 * 10);
  EXPECT_THROW(k.bind({BufferRef::matrix(x.data(), 4, 10), BufferRef::vector(g.data(), 10),
                       BufferRef::vector(b.data(), 9)},
                      {BufferRef::matrix(y.data(), 4, 10)}),
               Error);
  EXPECT_THROW(k.bind({BufferRef::matrix(x.data(), 4, 10), BufferRef::vector(g.data(), 10)},
                      {BufferRef::matrix(y.data(), 4, 10)}),
               Error);
  // Two outputs sharing memory are refused, as by run().
  Program two = [] {
    ProgramBuilder p("two");
    Expr x = p.rows("x");
    p.output("a", x + 1.0f);
    p.output("b", x * 2.0f);
    return p.build();
  }();
  Kernel k2 = compile(two, test::targetOptions());
  EXPECT_THROW(
      k2.bind({BufferRef::matrix(x.data(), 4, 10)},
              {BufferRef::matrix(y.data(), 4, 10), BufferRef::matrix(y.data() + 5, 4, 10)}),
      Error);
  BoundCall empty;
  empty(); // does nothing
}

// The bound call reads the buffers' contents at every call (only their
// addresses are bound), and a default run() after changes sees them too.
TEST(BoundCall, ReadsCurrentContents) {
  Kernel k = compile(library::swiglu(), test::targetOptions());
  int64_t R = 3, C = 37;
  std::vector<float> x = ramp(R * C, 1.5f), u = ramp(R * C, 0.7f), y(R * C), ref(R * C);
  BoundCall call = k.bind({BufferRef::matrix(x.data(), R, C), BufferRef::matrix(u.data(), R, C)},
                          {BufferRef::matrix(y.data(), R, C)});
  call();
  x[5] = 3.0f;
  call();
  k.run({BufferRef::matrix(x.data(), R, C), BufferRef::matrix(u.data(), R, C)},
        {BufferRef::matrix(ref.data(), R, C)});
  EXPECT_TRUE(sameBits(y, ref));
}

// run() remembers its last checked call; any change of shape, pointer or
// stride is checked again (a bad one still throws), and a different kernel
// never reuses another's binding.
TEST(RunMemory, RebindsOnChangedShapesPointersAndKernels) {
  Kernel k = compile(library::rmsNorm(), test::targetOptions());
  Kernel other = compile(library::layerNorm(), test::targetOptions());
  std::vector<float> x = ramp(8 * 40, 1.2f), g = ramp(40, 0.3f), b = ramp(40, 0.1f);
  std::vector<float> y1(8 * 40), y2(8 * 40);
  auto run = [&](int64_t R, int64_t C, float *out, int64_t stride = 0) {
    k.run({BufferRef::matrix(x.data(), R, C, stride), BufferRef::vector(g.data(), C)},
          {BufferRef::matrix(out, R, C, stride)});
  };
  run(4, 20, y1.data());
  run(4, 20, y1.data()); // remembered
  run(8, 20, y2.data()); // new rows and output
  run(4, 17, y2.data(), 20);
  check::Case c = check::makeCase(k.program(), {4, 17}, check::Fill::Random, 3);
  k.run(c.inputRefs(), c.outputRefs());
  EXPECT_TRUE(test::matchesReference(c));
  // The same buffer references with another kernel: its own checks (layerNorm
  // has one more input, so this call is refused).
  EXPECT_THROW(other.run({BufferRef::matrix(x.data(), 4, 20), BufferRef::vector(g.data(), 20)},
                         {BufferRef::matrix(y1.data(), 4, 20)}),
               Error);
  // A bad call after a good one still throws.
  EXPECT_THROW(k.run({BufferRef::matrix(x.data(), 4, 20), BufferRef::vector(g.data(), 19)},
                     {BufferRef::matrix(y1.data(), 4, 20)}),
               Error);
  other.run({BufferRef::matrix(x.data(), 4, 20), BufferRef::vector(g.data(), 20),
             BufferRef::vector(b.data(), 20)},
            {BufferRef::matrix(y1.data(), 4, 20)});
}

// Aliasing: y exactly on x (the entry's guard) and y shifted into x
// (partial overlap: a copy per call), through bind() and remembered run()
// calls, every result equal to an un-aliased run on the same values.
TEST(BoundCall, AliasedBuffersKeepTheirSafePaths) {
  for (Program p : {test::writeAheadProgram(), library::swiglu()}) {
    Kernel k = compile(p, test::targetOptions());
    int64_t R = 5, C = 36;
    for (int64_t shift : {int64_t{0}, int64_t{1}, int64_t{7}, C + 3}) {
      SCOPED_TRACE(p.name + " shift " + std::to_string(shift));
      for (int repeat = 0; repeat < 2; ++repeat) {
        for (bool bound : {true, false}) {
          std::vector<float> arena = ramp(R * C + shift + 8, 1.1f), u = ramp(R * C, 0.5f);
          std::vector<float> xCopy(arena.begin(), arena.begin() + R * C), want(R * C);
          std::vector<BufferRef> ins{BufferRef::matrix(xCopy.data(), R, C)};
          if (p.inputs.size() == 2)
            ins.push_back(BufferRef::matrix(u.data(), R, C));
          std::vector<BufferRef> wantRef{BufferRef::matrix(want.data(), R, C)};
          k.run(ins, wantRef);
          ins[0] = BufferRef::matrix(arena.data(), R, C);
          std::vector<BufferRef> outs{BufferRef::matrix(arena.data() + shift, R, C)};
          if (bound)
            k.bind(ins, outs)();
          else
            k.run(ins, outs);
          std::vector<float> got(arena.begin() + shift, arena.begin() + shift + R * C);
          EXPECT_TRUE(sameBits(got, want));
        }
      }
    }
  }
}

// A bound call with a partial overlap copies the input at every call, so a
// second call sees the first call's writes as its input.
TEST(BoundCall, PartialOverlapIsCopiedAtEveryCall) {
  Kernel k = compile(library::swiglu(), test::targetOptions());
  int64_t R = 2, C = 20;
  std::vector<float> arena = ramp(R * C + 3, 1.0f), u = ramp(R * C, 0.5f);
  std::vector<float> mirror = arena;
  BoundCall call =
      k.bind({BufferRef::matrix(arena.data(), R, C), BufferRef::matrix(u.data(), R, C)},
             {BufferRef::matrix(arena.data() + 3, R, C)});
  for (int i = 0; i < 3; ++i) {
    call();
    std::vector<float> in(mirror.begin(), mirror.begin() + R * C), out(R * C);
    k.run({BufferRef::matrix(in.data(), R, C), BufferRef::matrix(u.data(), R, C)},
          {BufferRef::matrix(out.data(), R, C)});
    std::copy(out.begin(), out.end(), mirror.begin() + 3);
    EXPECT_TRUE(sameBits(arena, mirror)) << "call " << i;
  }
}

} // namespace
} // namespace lanejit
