// Rows across lanes (codegen/emit_rows_across_lanes.h): a block of W rows
// per packet set, rows in their row-major layout (P lanes per row up to W
// columns, Q packets per row above) or, for programs that slice, one row
// per lane. Every library program (also with bf16 or f16 buffers) and the
// fuzz seed corpus's programs, W = 4, 8 and 16, on C in kColumns (every
// P = 1...16, C = P and C < P, Q = 1...16) and R in {1, 2, W-1, W+1, 1000}:
// the rows-across-lanes entry (forced for every C, whatever the mapping rule
// picks) gives bitwise the packet-local kernel's outputs, within 5e-5 of the FP64 oracle; on 1-3
// threads, in place (exactly aliased), with rows of stride C (the dense
// blocks) and padded rows (the strided ones); the rule and the report.
#include "support/aliased_call.h"
#include "support/output_bits.h"
#include "support/testing.h"

#include "kernel/kernel_impl.h"
#include "launch/row_launch.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace lanejit {
namespace {

constexpr int64_t kColumns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 32, 33, 48, 64};

// Every C up to kMaxRowsAcrossLanesColumns runs rows across lanes while it lives.
struct ForceRowsAcrossLanes {
  ForceRowsAcrossLanes() { forceRowsAcrossLanes(true); }
  ~ForceRowsAcrossLanes() { forceRowsAcrossLanes(false); }
};

using test::Outputs;
using test::outputsOf;
using test::sameBits;

CompileOptions withLanes(int lanes, bool rowsAcrossLanes) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  o.rows_across_lanes = rowsAcrossLanes;
  // Packet-local calls run the generic entry (column_entries_test.cpp
  // covers the entries specialised per C).
  o.specialize_columns = false;
  return o;
}

std::vector<Program> programs() {
  std::vector<Program> all;
  for (const library::Entry &e : library::all()) {
    all.push_back(e.make());
    // Loads that widen and stores that round, across lanes too.
    all.push_back(withStorage(e.make(), e.name == "layernorm" ? DType::F16 : DType::BF16));
  }
  for (const auto &file : std::filesystem::directory_iterator(LANEJIT_FUZZ_CORPUS)) {
    std::ifstream in(file.path());
    std::stringstream text;
    text << in.rdbuf();
    try {
      all.push_back(parse(text.str()));
    } catch (const Error &) {
      // not a program the compiler accepts
    }
  }
  return all;
}

// Runs `k` on `c` (outputs NaN first) with `threads`; checks the oracle.
::testing::AssertionResult runChecked(const Kernel &k, check::Case &c, int threads, Outputs &out) {
  for (check::GuardedBuffer &b : c.outputs)
    b.fill(std::numeric_limits<float>::quiet_NaN());
  launch::CallThreads scope(threads);
  ::testing::AssertionResult ok = test::runMatchesReference(k, c);
  out = outputsOf(c);
  return ok;
}

class RowsAcrossLanes : public ::testing::TestWithParam<int> {};

TEST_P(RowsAcrossLanes, SameBitsAsPacketLocalOnEveryProgram) {
  int W = GetParam();
  ForceRowsAcrossLanes force;
  double savedMin = launch::minWorkNs();
  launch::setMinWorkNs(0); // every call with 2+ rows splits across threads
  int ran = 0;
  for (const Program &program : programs()) {
    std::optional<Kernel> rows, packet;
    try {
      rows = compile(program, withLanes(W, true));
      packet = compile(program, withLanes(W, false));
    } catch (const Error &) {
      continue;
    }
    for (int64_t C : kColumns)
      for (int64_t R : {int64_t{1}, int64_t{2}, int64_t{W - 1}, int64_t{W + 1}, int64_t{1000}})
        for (int64_t pad : {int64_t{0}, int64_t{3}}) {
          if (pad && R != W + 1)
            continue; // padded rows: one shape per C
          SCOPED_TRACE(::testing::Message()
                       << program.name << " W=" << W << " " << R << "x" << C << " pad " << pad);
          std::optional<check::Case> c;
          try {
            c = check::makeCase(program, {R, C}, check::Fill::Random, 5, pad);
            Outputs want;
            ASSERT_TRUE(runChecked(*packet, *c, 1, want));
            ASSERT_NE(rows->nativeEntry(R, C), packet->nativeEntry()) << "not rows across lanes";
            for (int threads : {1, 2, 3}) {
              Outputs got;
              ASSERT_TRUE(runChecked(*rows, *c, threads, got)) << "threads " << threads;
              ASSERT_TRUE(sameBits(got, want)) << "threads " << threads;
            }
            ++ran;
          } catch (const Error &) {
            // a shape this program refuses (C/2 with odd C)
          }
        }
  }
  launch::setMinWorkNs(savedMin);
  EXPECT_GT(ran, 500);
}

TEST_P(RowsAcrossLanes, SpecialValuesKeepTheirBits) {
  int W = GetParam();
  ForceRowsAcrossLanes force;
  for (const library::Entry &e : library::all()) {
    Kernel rows = compile(e.make(), withLanes(W, true));
    Kernel packet = compile(e.make(), withLanes(W, false));
    for (int64_t C : {int64_t{2}, int64_t{10}, int64_t{64}}) { // even: RoPE
      SCOPED_TRACE(::testing::Message() << e.name << " W=" << W << " C=" << C);
      check::Case c = check::makeCase(e.make(), {W + 3, C}, check::Fill::Random, 9);
      // NaN, infinities, signed zeros and a huge value in the first input.
      const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               -0.0f,
                               0.0f,
                               3e38f};
      check::GuardedBuffer &x = c.inputs[0];
      for (int64_t i = 0; i < x.elements(); i += 3)
        x.data()[i] = special[(i / 3) % 6];
      packet.run(c.inputRefs(), c.outputRefs());
      Outputs want = outputsOf(c);
      for (check::GuardedBuffer &b : c.outputs)
        b.fill(1.0f);
      rows.run(c.inputRefs(), c.outputRefs());
      EXPECT_TRUE(sameBits(outputsOf(c), want));
    }
  }
}

TEST_P(RowsAcrossLanes, InPlaceAndStridedCalls) {
  int W = GetParam();
  ForceRowsAcrossLanes force;
  for (const library::Entry &e : library::all()) {
    Program program = e.make();
    Kernel rows = compile(program, withLanes(W, true));
    for (int64_t C : {int64_t{2}, int64_t{8}, int64_t{18}, int64_t{64}}) // even: RoPE
      for (int64_t R : {int64_t{1}, int64_t{W + 1}, int64_t{3 * W}})
        for (int64_t pad : {int64_t{0}, int64_t{5}}) {
          SCOPED_TRACE(::testing::Message()
                       << e.name << " W=" << W << " " << R << "x" << C << " pad " << pad);
          test::Layout l = test::separateLayout(program, {R, C}, pad);
          // The output exactly on the first input (same address and stride).
          if (l.outputs[0].cols != l.inputs[0].cols || l.outputs[0].rows != l.inputs[0].rows)
            continue;
          l.outputs[0].at = l.inputs[0].at;
          l.outputs[0].stride = l.inputs[0].stride;
          EXPECT_TRUE(test::runAliased(rows, l, 3));
        }
  }
}

INSTANTIATE_TEST_SUITE_P(W, RowsAcrossLanes, ::testing::Values(4, 8, 16),
                         [](const auto &info) { return "W" + std::to_string(info.param); });

TEST(RowsAcrossLanesRule, ReportNamesTheMappingAndWhy) {
  CompileOptions o = withLanes(8, true);
  Kernel rmsKernel = compile(library::rmsNorm(), o);
  const CompileReport &rms = rmsKernel.report();
  EXPECT_EQ(rms.mapping.rows_across_lanes_max_cols, 32);
  EXPECT_NE(rms.text().find("rows across lanes (blocks of 8 rows in row-major packets, the next "
                            "power of two >= C lanes per row; one row per lane for programs that "
                            "slice) for C <= 32 "
                            "and R >= W"),
            std::string::npos)
      << rms.text();
  EXPECT_NE(rms.json().find("\"rows_across_lanes_max_cols\""), std::string::npos);
  // All-elementwise programs already run dense rows as one long row.
  Kernel swigluKernel = compile(library::swiglu(), o);
  const CompileReport &swiglu = swigluKernel.report();
  EXPECT_EQ(swiglu.mapping.rows_across_lanes_max_cols, 0);
  EXPECT_NE(swiglu.mapping.rows_across_lanes_reason.find("flatten-rows"), std::string::npos);
  o.rows_across_lanes = false;
  EXPECT_EQ(compile(library::rmsNorm(), o).report().mapping.rows_across_lanes_max_cols, 0);
}

TEST(RowsAcrossLanesRule, EntryFollowsTheRule) {
  Kernel k = compile(library::rmsNorm(), withLanes(8, true));
  EXPECT_NE(k.nativeEntry(100, 8), k.nativeEntry());
  EXPECT_EQ(k.nativeEntry(100, 8), k.nativeEntry(8, 8)); // compiled once per C
  EXPECT_NE(k.nativeEntry(100, 32), k.nativeEntry());
  EXPECT_EQ(k.nativeEntry(100, 33), k.nativeEntry()); // C > 4W
  EXPECT_EQ(k.nativeEntry(7, 8), k.nativeEntry());    // R < W
  Kernel off = compile(library::rmsNorm(), withLanes(8, false));
  EXPECT_EQ(off.nativeEntry(100, 8), off.nativeEntry());
}

TEST(RowsAcrossLanesRule, BadCallsStillFailAsBefore) {
  Kernel k = compile(library::rmsNorm(), withLanes(8, true));
  check::Case c = check::makeCase(library::rmsNorm(), {4, 8});
  std::vector<BufferRef> in = c.inputRefs(), out = c.outputRefs();
  in[0].data = nullptr;
  EXPECT_THROW(k.run(in, out), Error);
  // An output overlapping an input partially: staged by run(), same bits.
  ForceRowsAcrossLanes force;
  test::Layout l = test::separateLayout(library::rmsNorm(), {9, 8});
  l.outputs[0].at = l.inputs[0].at + 3;
  EXPECT_TRUE(test::runAliased(k, l, 2));
}

} // namespace
} // namespace lanejit
