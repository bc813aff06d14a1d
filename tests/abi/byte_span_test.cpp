// Shapes whose byte span, Dims or indices overflow are rejected wherever a
// span is computed (bindShape, Kernel::run, the reference evaluator), with
// Error(Kind::Bind) naming the buffer, never accepted with wrapped offsets.
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/reference.h>
#include <lanejit/shape_binding.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace lanejit {
namespace {

using Refs = std::vector<BufferRef>;
constexpr int64_t kTwoTo62 = int64_t{1} << 62;

// y = 2 * x, x and y [R, C].
Program twice() {
  ProgramBuilder b("twice");
  Expr x = b.rows("x");
  b.write("y", 0, x * constant(2.0f));
  return b.build();
}

template <class Call> std::string bindError(Call call) {
  try {
    call();
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind) << e.what();
    return e.what();
  }
  return "no error";
}

using test::has;

TEST(ByteSpan, AStrideWhoseSpanWrapsIsRejectedByRun) {
  // The example: 2^62 floats of stride are 2^64 bytes, so row 1
  // would wrap to row 0's address.
  Kernel k = compile(twice());
  std::vector<float> x(3 * 8, 1.0f), y(3 * 8, 0.0f);
  std::string e = bindError([&] {
    k.run({BufferRef{x.data(), 3, 8, kTwoTo62}}, {BufferRef::matrix(y.data(), 3, 8)});
  });
  EXPECT_TRUE(has(e, "input 'x'") && has(e, "row stride 4611686018427387904") &&
              has(e, "address space"))
      << e;
  e = bindError([&] {
    k.run({BufferRef::matrix(x.data(), 3, 8)}, {BufferRef{y.data(), 3, 8, kTwoTo62}});
  });
  EXPECT_TRUE(has(e, "output 'y'") && has(e, "address space")) << e;
  EXPECT_EQ(y, std::vector<float>(3 * 8, 0.0f)) << "nothing written";
}

TEST(ByteSpan, EveryStepOfTheSpanIsChecked) {
  Program p = twice();
  std::vector<float> storage(64);
  void *x = storage.data();
  auto bind = [&](BufferRef in) { return bindError([&] { bindShape(p, Refs{in}, {}); }); };
  // (rows - 1) * stride overflows.
  EXPECT_TRUE(has(bind({x, 3, 8, INT64_MAX / 2 + 1}), "address space"));
  // ... + cols overflows.
  EXPECT_TRUE(has(bind({x, 2, 8, INT64_MAX - 4}), "address space"));
  // ... * sizeof(float) overflows.
  EXPECT_TRUE(has(bind({x, 2, 8, int64_t{1} << 61}), "address space"));
  // Rows alone overflow it (dense).
  EXPECT_TRUE(has(bind(BufferRef::matrix(x, kTwoTo62, 8)), "address space"));
  // The span fits in int64_t but its end wraps past the top of the address space.
  void *high = reinterpret_cast<void *>(uintptr_t{0} - 4096);
  EXPECT_TRUE(has(bind(BufferRef::matrix(high, 1, 2048)), "address space"));
  // Large but representable spans are shapes like any other.
  EXPECT_EQ(bind({x, 2, 8, int64_t{1} << 60}), "no error");
  EXPECT_EQ(bind(BufferRef::matrix(high, 1, 1000)), "no error");
  EXPECT_EQ(bind({x, 0, 8, INT64_MAX}), "no error") << "no rows, no span";
}

TEST(ByteSpan, DimsThatOverflowAreRejectedNotWrapped) {
  // y:[R, 2*C]; C = 2^62 (no rows, so no memory) makes 2*C = 2^63.
  ProgramBuilder b("wide");
  Expr x = b.rows("x");
  b.write("y", 0, x, Dim::C() * 2);
  b.write("y", Dim::C(), x, Dim::C() * 2);
  Program p = b.build();
  std::string e = bindError([&] {
    bindShape(p, Refs{BufferRef::matrix(nullptr, 0, kTwoTo62)},
              Refs{BufferRef::matrix(nullptr, 0, 0)});
  });
  EXPECT_TRUE(has(e, "2*C overflows a 64-bit integer for C = 4611686018427387904")) << e;
  // C itself from a C/2 buffer: 2 * 2^62 is not an int64_t.
  ProgramBuilder h("half");
  Expr half = h.rows("h", Dim::C() / 2);
  h.output("y", half);
  e = bindError([&] { bindShape(h.build(), Refs{BufferRef::matrix(nullptr, 0, kTwoTo62)}, {}); });
  EXPECT_TRUE(has(e, "input 'h'")) << e;
}

TEST(ByteSpan, ColumnIndicesBeyond32BitsAreRejected) {
  // C fits in 31 bits, 2*C does not: the kernel's i32 column indices would wrap.
  ProgramBuilder b("wide");
  Expr x = b.rows("x");
  b.write("y", 0, x, Dim::C() * 2);
  b.write("y", Dim::C(), x + toF32(col()), Dim::C() * 2);
  Kernel k = compile(b.build());
  int64_t c = (int64_t{1} << 30) + 1;
  std::string e = bindError(
      [&] { k.run({BufferRef::matrix(nullptr, 0, c)}, {BufferRef::matrix(nullptr, 0, 2 * c)}); });
  EXPECT_TRUE(has(e, "output 'y'") && has(e, "32-bit")) << e;
  EXPECT_TRUE(has(bindError([&] { k.workspaceFloats(int64_t{1} << 31); }), "2^31 - 1"));
}

TEST(ByteSpan, RowIndicesBeyond32BitsAreRejectedWhenTheProgramReadsThem) {
  // y = x + row: R = 2^31 would wrap the i32 row index. The buffers are
  // never touched (the addresses are not mapped): the call must be refused.
  ProgramBuilder b("rowplus");
  Expr x = b.rows("x");
  b.write("y", 0, x + toF32(row()));
  Kernel k = compile(b.build());
  int64_t rows = int64_t{1} << 31;
  void *in = reinterpret_cast<void *>(uintptr_t{1} << 44);
  void *out = reinterpret_cast<void *>(uintptr_t{1} << 45);
  std::string e = bindError(
      [&] { k.run({BufferRef::matrix(in, rows, 1)}, {BufferRef::matrix(out, rows, 1)}); });
  EXPECT_TRUE(has(e, "R = 2147483648") && has(e, "row index")) << e;
}

TEST(ByteSpan, TheReferenceEvaluatorRejectsAWrappingStride) {
  std::vector<float> x(3 * 8, 1.0f);
  std::string e = bindError([&] {
    evaluateReference(twice(), Refs{BufferRef{x.data(), 3, 8, kTwoTo62}}, {3, 8});
  });
  EXPECT_TRUE(has(e, "input 'x'") && has(e, "address space")) << e;
}

} // namespace
} // namespace lanejit
