// In-place calls (output = input, same row stride) through both alias
// paths: a traversal order proved safe (read directly) and a guarded one
// (the guard fires and the row is staged). Every switch that touches the
// paths, every W: results match the oracle on an un-aliased copy and are
// bitwise identical. And the guard is evaluated once per launch: its
// comparison sits before the row loop unless hoisting is off.
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/reference.h>

#include <cmath>
#include <cstring>
#include <random>

namespace lanejit {
namespace {

std::vector<CompileOptions> configurations() {
  std::vector<CompileOptions> all;
  for (int lanes : {4, 8, 16})
    for (int bits = 0; bits < 16; ++bits) {
      CompileOptions o = test::targetOptions();
      o.lanes = lanes;
      o.fuse_outputs = bits & 1;
      o.prove_in_place = bits & 2;
      o.hoist_guards = bits & 4;
      o.inline_packet_bodies =
          bits & 8 ? CompileOptions::Inline::Never : CompileOptions::Inline::CostRule;
      all.push_back(o);
    }
  return all;
}

// Runs `program` with y aliased onto x (same pointer, same stride) and
// returns y's values; checks them against the oracle on a copy of x.
std::vector<float> runInPlace(const Program &program, const CompileOptions &o, int64_t rows,
                              int64_t cols, int64_t stride, int64_t yCols) {
  std::vector<float> memory(rows * stride);
  std::mt19937 rng(static_cast<uint32_t>(cols * 131 + rows));
  std::uniform_real_distribution<float> dist(-2, 2);
  for (float &v : memory)
    v = dist(rng);
  std::vector<float> original = memory;
  BufferRef x = BufferRef::matrix(memory.data(), rows, cols, stride);
  BufferRef y = BufferRef::matrix(memory.data(), rows, yCols, stride);
  compile(program, o).run({x}, {y});

  BufferRef copy = BufferRef::matrix(original.data(), rows, cols, stride);
  std::vector<BufferRef> inputs{copy};
  ReferenceOutput ref = evaluateReference(program, inputs, {rows, cols}).at(0);
  std::vector<float> got;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < stride; ++c) {
      float v = memory[r * stride + c];
      if (c >= yCols) { // not an output column: must still be the input
        EXPECT_EQ(0, std::memcmp(&v, &original[r * stride + c], sizeof v))
            << "row " << r << " col " << c << " changed";
        continue;
      }
      double want = ref.at(r, c);
      EXPECT_LE(std::abs(v - want), check::kTolerance + check::kTolerance * std::abs(want))
          << "y[" << r << "," << c << "] = " << v << ", want " << want;
      got.push_back(v);
    }
  return got;
}

void sweep(const Program &program, bool halfWidthOutput) {
  for (int64_t cols : {4, 8, 12, 36, 68, 132, 260}) {
    for (int64_t pad : {0, 3}) {
      SCOPED_TRACE(testing::Message() << program.name << " C=" << cols << " pad=" << pad);
      int64_t yCols = halfWidthOutput ? cols / 2 : cols;
      std::vector<float> first;
      for (const CompileOptions &o : configurations()) {
        SCOPED_TRACE(o.key());
        std::vector<float> got = runInPlace(program, o, 5, cols, cols + pad, yCols);
        if (first.empty())
          first = got;
        ASSERT_EQ(0, std::memcmp(got.data(), first.data(), got.size() * sizeof(float)))
            << "bits differ from the first configuration";
      }
    }
  }
}

TEST(InPlace, GuardedWriteAheadStagesTheRow) {
  sweep(test::writeAheadProgram(), false);
}

TEST(InPlace, ProvedWriteBehindReadsDirectly) {
  sweep(test::writeBehindProgram(), true);
}

TEST(InPlace, RopeWithUnjoinedTraversalsFiresItsGuard) {
  // fuse_outputs off: y's first half is written before x's first half is
  // read again — the guard must stage x's row. Checked through run() on
  // the library program with y == x.
  for (int lanes : {4, 16}) {
    CompileOptions o = test::targetOptions();
    o.lanes = lanes;
    o.fuse_outputs = false;
    Program rope = library::rope();
    int64_t rows = 3, cols = 2 * (2 * lanes + 3);
    std::vector<float> xy(rows * cols), cs(rows * cols / 2), sn(rows * cols / 2);
    for (size_t i = 0; i < xy.size(); ++i)
      xy[i] = check::fixtureValue("x", static_cast<int64_t>(i));
    for (size_t i = 0; i < cs.size(); ++i) {
      cs[i] = check::fixtureValue("cos", static_cast<int64_t>(i));
      sn[i] = check::fixtureValue("sin", static_cast<int64_t>(i));
    }
    std::vector<float> x0 = xy;
    std::vector<BufferRef> in{BufferRef::matrix(x0.data(), rows, cols),
                              BufferRef::matrix(cs.data(), rows, cols / 2),
                              BufferRef::matrix(sn.data(), rows, cols / 2)};
    ReferenceOutput ref = evaluateReference(rope, in, {rows, cols}).at(0);
    in[0] = BufferRef::matrix(xy.data(), rows, cols);
    std::vector<BufferRef> out{BufferRef::matrix(xy.data(), rows, cols)};
    compile(rope, o).run(in, out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_NEAR(xy[r * cols + c], ref.at(r, c), 1e-5)
            << "W=" << lanes << " y[" << r << "," << c << "]";
  }
}

// The basic block holding the first guard comparison in the unoptimized IR.
std::string guardBlock(const std::string &ir) {
  std::string block;
  size_t start = 0;
  while (start < ir.size()) {
    size_t end = ir.find('\n', start);
    std::string line = ir.substr(start, end - start);
    start = end == std::string::npos ? ir.size() : end + 1;
    if (!line.empty() && line[0] != ' ' && line.back() == ':')
      block = line.substr(0, line.size() - 1);
    else if (!line.empty() && line[0] != ' ' && line.find(": ") != std::string::npos &&
             line.find("define") == std::string::npos && line.find(';') != std::string::npos)
      block = line.substr(0, line.find(':'));
    if (line.find("%alias.guard.") != std::string::npos && line.find(" = ") != std::string::npos)
      return block;
  }
  return "";
}

TEST(GuardPlacement, HoistedGuardRunsOncePerLaunchNotPerRow) {
  CompileOptions o;
  o.lanes = 8;
  Kernel hoisted = compile(test::writeAheadProgram(), o);
  EXPECT_EQ(hoisted.report().guards_emitted, 1);
  EXPECT_EQ(hoisted.report().guards_hoisted, 1);
  // Before the row loop: in the entry block, which runs once per call.
  EXPECT_EQ(guardBlock(hoisted.dump("llvm-unoptimized")), "entry");

  o.hoist_guards = false;
  Kernel perRow = compile(test::writeAheadProgram(), o);
  EXPECT_EQ(perRow.report().guards_hoisted, 0);
  EXPECT_EQ(guardBlock(perRow.dump("llvm-unoptimized")), "row.body");
}

TEST(GuardPlacement, ProvedPairsEmitNoGuard) {
  Kernel k = compile(test::writeBehindProgram());
  EXPECT_EQ(k.report().guards_emitted, 0);
  EXPECT_EQ(k.report().guards_proved_unnecessary, 1);
  EXPECT_EQ(test::countOccurrences(k.dump("llvm-unoptimized"), "alias.guard"), 0u);
}

} // namespace
} // namespace lanejit
