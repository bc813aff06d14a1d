// Kernel::run's contract: bad calls are rejected with clear errors; inputs
// that overlap outputs (in place, or shifted by part of a row) still give
// the oracle's answer computed on un-aliased copies.
#include "support/testing.h"

#include "jit/host_target.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <elf.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace lanejit {
namespace {

std::string runError(const Kernel &k, std::vector<BufferRef> in, std::vector<BufferRef> out) {
  try {
    k.run(in, out);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    return e.what();
  }
  return "";
}

TEST(KernelRun, RejectsWrongShapes) {
  Kernel k = compile(library::rope());
  std::vector<float> x(17 * 66), cs(17 * 33), y(17 * 66);
  auto m = [](float *p, int64_t r, int64_t c) { return BufferRef::matrix(p, r, c); };
  EXPECT_NE(runError(k, {m(x.data(), 17, 66), m(cs.data(), 17, 34), m(cs.data(), 17, 33)},
                     {m(y.data(), 17, 66)}),
            "");
  EXPECT_NE(runError(k, {m(x.data(), 17, 66), m(cs.data(), 16, 33), m(cs.data(), 17, 33)},
                     {m(y.data(), 17, 66)}),
            "");
  // Odd C: C/2 is not an integer.
  EXPECT_NE(runError(k, {m(x.data(), 17, 65), m(cs.data(), 17, 32), m(cs.data(), 17, 32)},
                     {m(y.data(), 17, 65)}),
            "");
  // Wrong number of buffers.
  EXPECT_NE(runError(k, {m(x.data(), 17, 66)}, {m(y.data(), 17, 66)}), "");
  // Stride smaller than the row.
  EXPECT_NE(runError(k,
                     {BufferRef::matrix(x.data(), 17, 66, 60), m(cs.data(), 17, 33),
                      m(cs.data(), 17, 33)},
                     {m(y.data(), 17, 66)}),
            "");
}

TEST(KernelRun, RejectsNullPointers) {
  Kernel k = compile(library::swiglu());
  std::vector<float> x(4 * 8), y(4 * 8);
  std::string msg =
      runError(k, {BufferRef::matrix(x.data(), 4, 8), BufferRef::matrix(nullptr, 4, 8)},
               {BufferRef::matrix(y.data(), 4, 8)});
  EXPECT_NE(msg.find("'u'"), std::string::npos) << msg;
  msg = runError(k, {BufferRef::matrix(x.data(), 4, 8), BufferRef::matrix(x.data(), 4, 8)},
                 {BufferRef::matrix(nullptr, 4, 8)});
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
}

TEST(KernelRun, RejectsOverlappingOutputs) {
  ProgramBuilder b("two_outputs");
  Expr in = b.rows("x");
  b.output("a", in * 2.0f);
  b.output("b", in + 1.0f);
  Kernel k = compile(b.build());
  std::vector<float> x(4 * 8), out(4 * 8 + 3);
  std::string msg =
      runError(k, {BufferRef::matrix(x.data(), 4, 8)},
               {BufferRef::matrix(out.data(), 4, 8), BufferRef::matrix(out.data() + 3, 4, 8)});
  EXPECT_NE(msg.find("overlap"), std::string::npos) << msg;
}

// Runs `program` with output 0 placed at `offset` floats from input `input`
// inside one shared allocation, and compares with the oracle on copies.
void checkAliased(const Program &program, Shape shape, int input, int64_t offset) {
  SCOPED_TRACE(testing::Message() << program.name << " input " << input << " offset " << offset);
  check::Case c = check::makeCase(program, shape, check::Fill::Random, 3);
  Kernel k = compile(program);
  // Reference on the un-aliased case.
  k.run(c.inputRefs(), c.outputRefs());
  ASSERT_TRUE(test::matchesReference(c));
  std::vector<float> want(c.outputs[0].data(), c.outputs[0].data() + c.outputs[0].elements());

  const check::GuardedBuffer &in = c.inputs[input];
  int64_t elements = std::max(in.elements(), c.outputs[0].elements());
  int64_t lead = std::max<int64_t>(0, -offset);
  std::vector<float> arena(static_cast<size_t>(elements + std::abs(offset) + 64));
  float *inPtr = arena.data() + lead;
  float *outPtr = inPtr + offset;
  std::copy(in.data(), in.data() + in.elements(), inPtr);
  std::vector<BufferRef> ins = c.inputRefs();
  ins[input].data = inPtr;
  BufferRef out = c.outputs[0].ref();
  out.data = outPtr;
  std::vector<BufferRef> outs{out};
  k.run(ins, outs);
  for (int64_t r = 0; r < shape.rows; ++r)
    for (int64_t col = 0; col < out.cols; ++col)
      ASSERT_EQ(outPtr[r * out.stride() + col], want[r * out.stride() + col])
          << "at " << r << "," << col;
}

TEST(KernelRun, AliasedInputsGiveTheUnaliasedAnswer) {
  const int64_t W = 16;
  for (const library::Entry &e : library::all()) {
    Program p = e.make();
    Shape shape{7, e.name == "rope" ? 66 : 65};
    for (size_t input = 0; input < p.inputs.size(); ++input) {
      if (p.inputs[input].kind != ParamKind::RowTensor || p.inputs[input].cols != Dim::C())
        continue;
      const int64_t half = shape.cols / 2, row = shape.cols;
      for (int64_t offset :
           {int64_t(0), int64_t(1), int64_t(-1), W - 1, 1 - W, W, -W, half, -half, row, -row})
        checkAliased(p, shape, static_cast<int>(input), offset);
    }
  }
}

TEST(KernelRun, SameBufferAsTwoInputs) {
  Program p = library::swiglu();
  check::Case c = check::makeCase(p, {5, 33}, check::Fill::Random, 9);
  c.inputs[1] = c.inputs[0]; // u = x, as values
  Kernel k = compile(p);
  k.run(c.inputRefs(), c.outputRefs());
  std::vector<float> want(c.outputs[0].data(), c.outputs[0].data() + c.outputs[0].elements());
  std::vector<BufferRef> ins = c.inputRefs();
  ins[1] = ins[0]; // u = x, as memory
  k.run(ins, c.outputRefs());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(c.outputs[0].data()[i], want[i]);
  EXPECT_TRUE(test::matchesReference(c));
}

TEST(KernelRun, BlockSizesDoNotChangeBits) {
  Program p = library::layerNorm();
  check::Case c = check::makeCase(p, {70, 45}, check::Fill::Random, 4);
  CompileOptions o = test::targetOptions();
  compile(p, o).run(c.inputRefs(), c.outputRefs());
  std::vector<float> want(c.outputs[0].data(), c.outputs[0].data() + c.outputs[0].elements());
  for (int block : {1, 3, 32, 1000}) {
    o.block_rows = block;
    c.outputs[0].fill(0);
    compile(p, o).run(c.inputRefs(), c.outputRefs());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(c.outputs[0].data()[i], want[i]) << "block " << block;
  }
}

} // namespace
} // namespace lanejit

namespace lanejit {
namespace {

TEST(KernelRun, RejectsColumnRangesThatAreNotIntegersForTheBoundC) {
  // Nothing declares a C/2 buffer, so only the slice depends on C/2.
  ProgramBuilder b("half");
  Expr x = b.rows("x");
  b.output("y", x + sum(x.cols(0, Dim::C() / 2)));
  Kernel k = compile(b.build());
  std::vector<float> x1(3 * 5), y(3 * 5);
  try {
    k.run({BufferRef::matrix(x1.data(), 3, 5)}, {BufferRef::matrix(y.data(), 3, 5)});
    ADD_FAILURE() << "C = 5 accepted for a C/2 slice";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("C/2 is not an integer"), std::string::npos) << e.what();
  }
}

TEST(KernelRun, MissingOutputsAreAnErrorNotACrash) {
  Kernel k = compile(library::swiglu());
  std::vector<float> x(3 * 8), u(3 * 8);
  std::vector<BufferRef> in{BufferRef::matrix(x.data(), 3, 8), BufferRef::matrix(u.data(), 3, 8)};
  std::vector<BufferRef> none;
  try {
    k.run(in, none);
    ADD_FAILURE() << "a call without its output was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    EXPECT_NE(std::string(e.what()).find("has 1 outputs; the call passed 0"), std::string::npos)
        << e.what();
  }
}

TEST(KernelRun, AScalarInsideTheOutputIsReadAsItWasBeforeTheCall) {
  // The scalar's BufferRef claims no extent (rows = cols = 0); it still
  // lies in y's first element, which the first block overwrites. Every row
  // must see the original value whatever the block size.
  ProgramBuilder b("scale");
  Expr x = b.rows("x");
  Expr s = b.scalar("s");
  b.output("y", x * s);
  Program p = b.build();
  const int64_t R = 100, C = 8;
  for (int block : {1, 8, 32}) {
    CompileOptions o = test::targetOptions();
    o.block_rows = block;
    std::vector<float> x1(R * C, 2.0f), y(R * C, 3.0f);
    std::vector<BufferRef> in{BufferRef::matrix(x1.data(), R, C), BufferRef{y.data(), 0, 0, 0}};
    std::vector<BufferRef> out{BufferRef::matrix(y.data(), R, C)};
    compile(p, o).run(in, out);
    for (int64_t i = 0; i < R * C; ++i)
      ASSERT_EQ(y[i], 6.0f) << "block " << block << " element " << i;
  }
}

TEST(KernelRun, WorkspaceSizeRefusesAColumnCountItsDimsDoNotDivide) {
  CompileOptions o;
  o.fuse_pointwise = false; // a workspace with C/2-long slots
  Kernel k = compile(library::rope(), o);
  EXPECT_GT(k.workspaceFloats(66), 0);
  EXPECT_THROW(k.workspaceFloats(65), Error);
}

TEST(KernelRun, ReportShowsEachKernelsOwnBlockRowsAfterACacheHit) {
  CompileOptions a, b;
  a.block_rows = 32;
  b.block_rows = 8; // same code, so the second compile is a cache hit
  EXPECT_EQ(compile(library::swiglu(), a).report().mapping.block_rows, 32);
  Kernel k = compile(library::swiglu(), b);
  EXPECT_TRUE(k.report().cache_hit);
  EXPECT_EQ(k.report().mapping.block_rows, 8);
}

TEST(KernelRun, UnknownDisabledPassIsAnError) {
  CompileOptions o;
  o.disabled_passes = {"fuse-everything"};
  try {
    compile(library::swiglu(), o);
    ADD_FAILURE() << "unknown pass accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no pass 'fuse-everything'"), std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace lanejit

namespace lanejit {
namespace {

// A feature LLVM knows that this machine lacks (every x86-64 CPU lacks
// some: AMD's sse4a, Intel's AMX, ...).
std::string aFeatureThisMachineLacks() {
  std::stringstream in(jit::hostTarget().features);
  std::string item;
  while (std::getline(in, item, ','))
    if (item.size() > 1 && item[0] == '-')
      return item.substr(1);
  return "";
}

TEST(KernelRun, AKernelForFeaturesThisMachineLacksIsRefusedNotRun) {
  std::string lacking = aFeatureThisMachineLacks();
  ASSERT_FALSE(lacking.empty()) << "the host query reported every feature on";
  EXPECT_EQ(jit::featuresMissingOnHost("+" + lacking), std::vector<std::string>{lacking});
  EXPECT_TRUE(jit::featuresMissingOnHost(jit::hostTarget().features).empty());

  CompileOptions o;
  o.target_features = "+" + lacking;
  Kernel k = compile(library::swiglu(), o);
  EXPECT_FALSE(k.object().empty()) << "it can still be inspected and written out";
  check::Case c = check::makeCase(library::swiglu(), {3, 17});
  try {
    k.run(c.inputRefs(), c.outputRefs());
    ADD_FAILURE() << "ran a kernel compiled for +" << lacking;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("features this machine lacks (" + lacking),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(k.nativeEntry(), Error);
}

TEST(KernelRun, AKernelForAnotherArchitectureIsCompiledNotRun) {
  // Before: rmsnorm for aarch64 on this x86-64 machine.
  CompileOptions o;
  o.target_triple = "aarch64-linux-gnu";
  o.target_cpu = "apple-m1";
  Kernel k = compile(library::rmsNorm(), o);
  // After: an AArch64 object to write out or inspect, refused when run.
  const std::string &object = k.object();
  ASSERT_GT(object.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof header);
  EXPECT_EQ(header.e_machine, EM_AARCH64);
  check::Case c = check::makeCase(library::rmsNorm(), {3, 17});
  try {
    k.run(c.inputRefs(), c.outputRefs());
    ADD_FAILURE() << "ran a kernel compiled for aarch64";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("compiled for aarch64 (apple-m1); this machine is x86_64"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(k.nativeEntry(), Error);
}

TEST(KernelRun, AnUnknownTargetIsACompileError) {
  CompileOptions o;
  o.target_triple = "riscv64-linux-gnu";
  EXPECT_THROW(compile(library::rmsNorm(), o), Error);
  o.target_triple = "aarch64-linux-gnu";
  o.target_cpu = "znver4"; // an x86 CPU named for aarch64
  EXPECT_THROW(compile(library::rmsNorm(), o), Error);
}

} // namespace
} // namespace lanejit
