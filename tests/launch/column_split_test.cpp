// Few long rows split by column chunks never change a bit. Rows longer than
// one chunk (lower::kChunkColumns) follow the chunked association: a scalar
// model of it (per chunk, column c into virtual lane c mod 64 in column
// order; chunk partials added in chunk order; the halving tree) gives the
// kernel's sums, means and maxima bit for bit, at every thread count and W.
// Every library program on R = 1, 2, 3 rows of chunk·k ± tail columns (C
// not a multiple of W) equals its one-thread, W = 4 result at threads
// 1..8 x W x switches; with the split forced, short shapes (tails, one
// column, per-row column bounds) run the column-split entry too.
#include "launch/column_split.h"
#include "launch/row_launch.h"
#include "launch/thread_pool.h"
#include "support/output_bits.h"
#include "support/testing.h"

#include <lanejit/dsl.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

namespace lanejit {
namespace {

constexpr int64_t kChunk = lower::kChunkColumns;

struct SplitEverything {
  double saved = launch::minWorkNs();
  explicit SplitEverything(bool force = false) {
    launch::setMinWorkNs(0);
    launch::setForcedColumnSplit(force);
  }
  ~SplitEverything() {
    launch::setMinWorkNs(saved);
    launch::setForcedColumnSplit(false);
  }
};

using test::Outputs;
using test::outputsOf;
using test::sameBits;

Outputs runWith(const Kernel &k, check::Case &c, int threads) {
  for (check::GuardedBuffer &b : c.outputs)
    b.fill(std::numeric_limits<float>::quiet_NaN());
  k.run(c.inputRefs(), c.outputRefs(), threads);
  for (const check::GuardedBuffer &b : c.outputs)
    EXPECT_TRUE(b.guardsIntact()) << "threads=" << threads;
  return outputsOf(c);
}

bool targetHas(int lanes) {
  try {
    CompileOptions o = test::targetOptions();
    o.lanes = lanes;
    compile(library::rmsNorm(), o);
    return true;
  } catch (const Error &) {
    return false;
  }
}

std::vector<CompileOptions> configurations() {
  std::vector<CompileOptions> configs;
  for (int lanes : {4, 8, 16}) {
    if (!targetHas(lanes))
      continue;
    CompileOptions o = test::targetOptions();
    o.lanes = lanes;
    configs.push_back(o);
    CompileOptions off = o;
    off.fuse_pointwise = off.fuse_reductions = off.fuse_outputs = false;
    off.specialize_full_packets = off.prove_in_place = off.hoist_guards = false;
    off.bound_masked_columns = off.flatten_rows = false;
    off.inline_packet_bodies = CompileOptions::Inline::Never;
    configs.push_back(off);
    CompileOptions on = o;
    on.branchless_tail = on.fill_stores = true;
    on.inline_packet_bodies = CompileOptions::Inline::Always;
    configs.push_back(on);
    CompileOptions noSplit = o;
    noSplit.column_split = false;
    configs.push_back(noSplit);
  }
  return configs;
}

// The chunked association of one row of a sum or a max, in scalar code.
float chunkedModel(const float *x, int64_t n, bool max) {
  float identity = max ? -INFINITY : -0.0f;
  float total[64];
  for (int64_t chunk = 0; chunk * kChunk < std::max<int64_t>(n, 1); ++chunk) {
    float lane[64];
    std::fill(lane, lane + 64, identity);
    for (int64_t c = chunk * kChunk; c < std::min(n, (chunk + 1) * kChunk); ++c)
      lane[c % 64] = max ? std::max(lane[c % 64], x[c]) : lane[c % 64] + x[c];
    for (int i = 0; i < 64; ++i)
      total[i] = chunk == 0 ? lane[i] : max ? std::max(total[i], lane[i]) : total[i] + lane[i];
  }
  for (int half = 32; half >= 1; half /= 2)
    for (int i = 0; i < half; ++i)
      total[i] = max ? std::max(total[i], total[i + half]) : total[i] + total[i + half];
  return total[0];
}

TEST(ColumnSplit, ChunkSizeIsWholeGroupsOfPacketsForEveryW) {
  for (int lanes : {4, 8, 16})
    EXPECT_EQ(kChunk % (lanes * (lower::kReductionLanes / lanes)), 0);
  EXPECT_EQ(lower::chunksOf(0), 1);
  EXPECT_EQ(lower::chunksOf(kChunk), 1);
  EXPECT_EQ(lower::chunksOf(kChunk + 1), 2);
}

TEST(ColumnSplit, SumsMeansAndMaximaFollowTheChunkedAssociation) {
  SplitEverything split;
  ProgramBuilder b("reductions");
  Expr x = b.rows("x");
  b.output("s", sum(x) + constant(0) * x);
  b.output("m", mean(x) + constant(0) * x);
  b.output("x_max", rowmax(x) + constant(0) * x);
  Program program = b.build();
  for (const CompileOptions &o : configurations()) {
    Kernel k = compile(program, o);
    for (int64_t rows : {1, 3})
      for (int64_t cols : {kChunk - 5, kChunk, 2 * kChunk + 13, 3 * kChunk - 7}) {
        check::Case c = check::makeCase(program, {rows, cols}, check::Fill::Random, 11);
        for (int threads : {1, 2, 3, 8}) {
          runWith(k, c, threads);
          for (int64_t r = 0; r < rows; ++r) {
            const float *row = c.inputs[0].data() + r * c.inputs[0].rowStride();
            float s = chunkedModel(row, cols, false);
            float m = s / static_cast<float>(cols);
            float mx = chunkedModel(row, cols, true);
            auto at = [&](int out) {
              return c.outputs[out].data()[r * c.outputs[out].rowStride()];
            };
            // x * 0 is +-0 (finite x): adding it leaves s unchanged unless
            // s is +-0, where the sign may differ; the data make that moot.
            EXPECT_EQ(std::bit_cast<uint32_t>(at(0)), std::bit_cast<uint32_t>(s))
                << "sum W=" << o.lanes << " " << rows << "x" << cols << " threads=" << threads;
            EXPECT_EQ(std::bit_cast<uint32_t>(at(1)), std::bit_cast<uint32_t>(m))
                << "mean W=" << o.lanes << " " << rows << "x" << cols << " threads=" << threads;
            EXPECT_EQ(std::bit_cast<uint32_t>(at(2)), std::bit_cast<uint32_t>(mx))
                << "max W=" << o.lanes << " " << rows << "x" << cols << " threads=" << threads;
          }
        }
      }
  }
}

// Every library program on long rows: one result for every thread count, W
// and switch setting, within tolerance of the FP64 oracle.
TEST(ColumnSplit, LibraryLongRowsSameBitsEverywhere) {
  SplitEverything split;
  std::vector<CompileOptions> configs = configurations();
  for (const library::Entry &e : library::all()) {
    int64_t even = e.name == "rope" ? 2 : 1;
    std::vector<Kernel> kernels;
    for (const CompileOptions &o : configs)
      kernels.push_back(compile(e.make(), o));
    for (int64_t rows : {1, 2, 3})
      for (int64_t cols : {kChunk + 1, 2 * kChunk - 6, 2 * kChunk + 19}) {
        int64_t c0 = cols % even ? cols + 1 : cols;
        check::Case c = check::makeCase(e.make(), {rows, c0}, check::Fill::Random, 5);
        Outputs want = runWith(kernels[0], c, 1);
        EXPECT_TRUE(test::matchesReference(c)) << e.name << " " << rows << "x" << c0;
        for (size_t i = 0; i < kernels.size(); ++i)
          for (int threads = 1; threads <= 8; ++threads)
            EXPECT_TRUE(sameBits(runWith(kernels[i], c, threads), want))
                << e.name << " " << rows << "x" << c0 << " W=" << configs[i].lanes << " config "
                << i % 4 << " threads=" << threads;
      }
  }
}

// With the split forced, rows of one chunk run the column-split entry too:
// tails of every W, one column, masked softmax's per-row column bounds.
TEST(ColumnSplit, ForcedOnShortShapesSameBits) {
  SplitEverything split(true);
  uint64_t before = launch::poolCounters().wakeups;
  for (const CompileOptions &o : configurations()) {
    for (const library::Entry &e : library::all()) {
      Kernel k = compile(e.make(), o);
      int64_t even = e.name == "rope" ? 2 : 1;
      for (int64_t rows : {1, 3, 7})
        for (int64_t cols : {1, 17, 67, 130}) {
          int64_t c0 = cols % even ? cols + 1 : cols;
          check::Case c = check::makeCase(e.make(), {rows, c0}, check::Fill::Random, 9);
          Outputs want = runWith(k, c, 1);
          for (int threads : {2, 3, 8})
            EXPECT_TRUE(sameBits(runWith(k, c, threads), want))
                << e.name << " " << rows << "x" << c0 << " W=" << o.lanes << " threads=" << threads;
        }
    }
  }
  EXPECT_GT(launch::poolCounters().wakeups, before) << "the column split ran";
}

// The fuzz seed corpus's programs (slices, column indices, bounds, every
// operation): long rows at every thread count, and short ones forced.
TEST(ColumnSplit, CorpusProgramsSameBits) {
  int ran = 0;
  for (const auto &file : std::filesystem::directory_iterator(LANEJIT_FUZZ_CORPUS)) {
    std::ifstream in(file.path());
    std::stringstream text;
    text << in.rdbuf();
    std::optional<Kernel> k;
    try {
      k = compile(parse(text.str()), test::targetOptions());
    } catch (const Error &) {
      continue;
    }
    for (bool force : {false, true})
      for (Shape shape : force ? std::vector<Shape>{{5, 12}, {3, 67}}
                               : std::vector<Shape>{{2, 2 * kChunk + 12}}) {
        SplitEverything split(force);
        try {
          check::Case c = check::makeCase(k->program(), shape, check::Fill::Random, 4);
          Outputs want = runWith(*k, c, 1);
          for (int threads : {2, 3, 8})
            EXPECT_TRUE(sameBits(runWith(*k, c, threads), want))
                << file.path() << " " << shape.rows << "x" << shape.cols << " threads=" << threads;
          ++ran;
        } catch (const Error &) {
          // a shape this program refuses
        }
      }
  }
  EXPECT_GT(ran, 5);
}

TEST(ColumnSplit, OneLongRowUsesTheWorkers) {
  SplitEverything split;
  Kernel k = compile(library::rmsNorm(), test::targetOptions());
  check::Case c = check::makeCase(k.program(), {1, 2 * kChunk + 3}, check::Fill::Random, 1);
  Outputs want = runWith(k, c, 1);
  uint64_t before = launch::poolCounters().wakeups;
  EXPECT_TRUE(sameBits(runWith(k, c, 2), want));
  EXPECT_GT(launch::poolCounters().wakeups, before);

  CompileOptions off = test::targetOptions();
  off.column_split = false;
  Kernel serial = compile(library::rmsNorm(), off);
  before = launch::poolCounters().wakeups;
  EXPECT_TRUE(sameBits(runWith(serial, c, 2), want));
  EXPECT_EQ(launch::poolCounters().wakeups, before);
}

// In place (y is x): the split would reorder reads and writes of the same
// columns across threads, so the call runs on one thread, with the same bits.
TEST(ColumnSplit, OverlappingOutputsAreNotSplit) {
  SplitEverything split;
  Kernel k = compile(library::swiglu(), test::targetOptions());
  int64_t cols = 2 * kChunk + 5;
  std::vector<float> x(cols), u(cols), y(cols), want(cols);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-2, 2);
  for (int64_t i = 0; i < cols; ++i) {
    x[i] = d(rng);
    u[i] = d(rng);
  }
  k.run({BufferRef::matrix(x.data(), 1, cols), BufferRef::matrix(u.data(), 1, cols)},
        {BufferRef::matrix(want.data(), 1, cols)}, 1);
  uint64_t before = launch::poolCounters().wakeups;
  k.run({BufferRef::matrix(x.data(), 1, cols), BufferRef::matrix(u.data(), 1, cols)},
        {BufferRef::matrix(x.data(), 1, cols)}, 2);
  EXPECT_EQ(launch::poolCounters().wakeups, before);
  EXPECT_EQ(std::memcmp(x.data(), want.data(), cols * sizeof(float)), 0);
}

} // namespace
} // namespace lanejit
