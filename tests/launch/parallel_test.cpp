// Threads never change a bit: every library program and every program of
// the fuzz seed corpus, at threads 1..8 (more than this machine's cores)
// x W x switch settings, on shapes with fewer rows than threads, one row,
// one column and tails, equal bit for bit to one thread. The cost model's
// threshold is set to 0 here so every call with two rows or more is split.
// Also: many caller threads at once beside a busy pool, a kernel run from
// inside a pool task, a one-thread call wakes no worker, bad thread counts.
#include "launch/row_launch.h"
#include "launch/thread_pool.h"
#include "support/entry_args.h"
#include "support/output_bits.h"
#include "support/testing.h"

#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace lanejit {
namespace {

struct SplitEverything {
  double saved = launch::minWorkNs();
  SplitEverything() { launch::setMinWorkNs(0); }
  ~SplitEverything() { launch::setMinWorkNs(saved); }
};

using test::Outputs;
using test::outputsOf;

// Runs `kernel` on a fresh seeded case at each thread count and expects
// the outputs of threads = 1 bit for bit; also checks the guards.
::testing::AssertionResult sameBitsAtEveryThreadCount(const Kernel &kernel, Shape shape) {
  check::Case c = check::makeCase(kernel.program(), shape, check::Fill::Random, 7);
  kernel.run(c.inputRefs(), c.outputRefs(), 1);
  Outputs want = outputsOf(c);
  for (int threads = 2; threads <= 8; ++threads) {
    for (check::GuardedBuffer &b : c.outputs)
      b.fill(std::numeric_limits<float>::quiet_NaN());
    kernel.run(c.inputRefs(), c.outputRefs(), threads);
    Outputs got = outputsOf(c);
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i])
        return ::testing::AssertionFailure()
               << kernel.program().name << " " << shape.rows << "x" << shape.cols << " output " << i
               << " differs at threads=" << threads;
    for (const check::GuardedBuffer &b : c.outputs)
      if (!b.guardsIntact())
        return ::testing::AssertionFailure() << "guard damaged at threads=" << threads;
  }
  return ::testing::AssertionSuccess();
}

std::vector<CompileOptions> configurations() {
  std::vector<CompileOptions> configs;
  for (int lanes : {4, 8, 16}) {
    CompileOptions o = test::targetOptions();
    o.lanes = lanes;
    configs.push_back(o);
    CompileOptions off = o;
    off.fuse_pointwise = off.fuse_reductions = off.fuse_outputs = false;
    off.specialize_full_packets = off.prove_in_place = off.hoist_guards = false;
    off.bound_masked_columns = false;
    off.inline_packet_bodies = CompileOptions::Inline::Never;
    configs.push_back(off);
    CompileOptions small = o;
    small.block_rows = 3; // blocks smaller than a thread's share
    configs.push_back(small);
  }
  return configs;
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

TEST(Parallel, LibraryProgramsSameBitsAtEveryThreadCount) {
  SplitEverything split;
  for (const CompileOptions &o : configurations()) {
    if (!targetHas(o.lanes))
      continue;
    for (const library::Entry &e : library::all()) {
      Kernel k = compile(e.make(), o);
      int64_t even = e.name == "rope" ? 2 : 1;
      for (int64_t rows : {1, 3, 7, 64})
        for (int64_t cols : {1, 17, 67, 130}) {
          int64_t c = cols % even ? cols + 1 : cols;
          EXPECT_TRUE(sameBitsAtEveryThreadCount(k, {rows, c})) << "W=" << o.lanes;
        }
    }
  }
}

TEST(Parallel, CorpusProgramsSameBitsAtEveryThreadCount) {
  SplitEverything split;
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
    for (int64_t cols : {12, 36, 67})
      try {
        EXPECT_TRUE(sameBitsAtEveryThreadCount(*k, {5, cols})) << file.path();
        ++ran;
      } catch (const Error &) {
        // a shape this program refuses
      }
  }
  EXPECT_GT(ran, 5);
}

// A kernel and its expected output at a shape, for the concurrency tests.
struct Reference {
  Kernel kernel = compile(library::layerNorm(), test::targetOptions());
  Shape shape{64, 257};
  check::Case c = check::makeCase(kernel.program(), shape, check::Fill::Random, 3);
  Outputs want;
  Reference() {
    kernel.run(c.inputRefs(), c.outputRefs(), 1);
    want = outputsOf(c);
  }
  bool check(int threads) const {
    check::Case mine = check::makeCase(kernel.program(), shape, check::Fill::Random, 3);
    kernel.run(mine.inputRefs(), mine.outputRefs(), threads);
    return outputsOf(mine) == want;
  }
};

TEST(Parallel, ManyCallersBesideABusyPool) {
  SplitEverything split;
  Reference ref;
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  // Keeps the pool busy with long jobs while the callers run.
  std::thread busy([&] {
    while (!stop.load())
      launch::parallelFor(
          4, 2,
          [](void *, int64_t) noexcept {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          },
          nullptr);
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i)
        bad += !ref.check(1 + (t + i) % 4);
    });
  for (std::thread &t : callers)
    t.join();
  stop = true;
  busy.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Parallel, KernelInsideAPoolTask) {
  SplitEverything split;
  Reference ref;
  struct Ctx {
    const Reference *ref;
    std::atomic<int> bad{0};
  } ctx{&ref};
  launch::parallelFor(
      6, 3,
      [](void *p, int64_t) noexcept {
        auto *c = static_cast<Ctx *>(p);
        c->bad += !c->ref->check(4);
      },
      &ctx);
  EXPECT_EQ(ctx.bad.load(), 0);
}

TEST(Parallel, OneThreadWorthOfWorkWakesNoWorker) {
  Reference ref; // cost model at its default: 17x65 is serial
  Kernel k = compile(library::swiglu(), test::targetOptions());
  check::Case c = check::makeCase(k.program(), {17, 65}, check::Fill::Random, 1);
  uint64_t before = launch::poolCounters().wakeups;
  for (int i = 0; i < 100; ++i)
    k.run(c.inputRefs(), c.outputRefs(), 8);
  check::Case one = check::makeCase(k.program(), {1, 4097}, check::Fill::Random, 1);
  k.run(one.inputRefs(), one.outputRefs(), 8);
  EXPECT_EQ(launch::poolCounters().wakeups, before);
}

TEST(Parallel, LargeCallsAreSplitByDefault) {
  Kernel k = compile(library::swiglu(), test::targetOptions());
  check::Case c = check::makeCase(k.program(), {256, 4097}, check::Fill::Random, 1);
  uint64_t before = launch::poolCounters().wakeups;
  k.run(c.inputRefs(), c.outputRefs(), 2);
  EXPECT_GT(launch::poolCounters().wakeups, before);
  EXPECT_TRUE(test::matchesReference(c));
}

// A kernel of `program`, a seeded case of `shape` holding its one-thread
// outputs (`want`), and the case's buffers as an argument block.
struct EntryCall {
  Kernel kernel;
  check::Case c;
  Outputs want;
  test::EntryArgs e;
  EntryCall(const Program &program, Shape shape)
      : kernel(compile(program, test::targetOptions())),
        c(check::makeCase(kernel.program(), shape, check::Fill::Random, 1)),
        want(oneThreadOutputs(kernel, c)), e(kernel, c) {}
  static Outputs oneThreadOutputs(const Kernel &k, check::Case &c) {
    k.run(c.inputRefs(), c.outputRefs(), 1);
    return outputsOf(c);
  }
};

TEST(Parallel, RunEntrySplitsAsRunDoes) {
  SplitEverything split;
  EntryCall call(library::layerNorm(), {33, 100});
  call.c.outputs[0].fill(0);
  call.kernel.runEntry(call.e.args, 4);
  EXPECT_EQ(outputsOf(call.c), call.want);
  EXPECT_THROW(call.kernel.runEntry(call.e.args, 0), Error);
}

// runEntry keeps its last serial decision for a repeat of the same call;
// a change of anything it was derived from must be seen.
TEST(Parallel, RepeatedRunEntryFollowsTheCostModelAndTheShape) {
  EntryCall ln(library::layerNorm(), {17, 65});
  // Before: a small call, serial by the cost model, repeated.
  uint64_t before = launch::poolCounters().wakeups;
  for (int i = 0; i < 3; ++i) {
    ln.c.outputs[0].fill(0);
    ln.kernel.runEntry(ln.e.args, 2);
    EXPECT_EQ(outputsOf(ln.c), ln.want);
  }
  EXPECT_EQ(launch::poolCounters().wakeups, before);
  {
    // The cost model's threshold drops: the same call is split now.
    SplitEverything split;
    ln.c.outputs[0].fill(0);
    ln.kernel.runEntry(ln.e.args, 2);
    EXPECT_GT(launch::poolCounters().wakeups, before);
    EXPECT_EQ(outputsOf(ln.c), ln.want);
  }
  // Fewer rows in the same buffers: only those rows are written.
  ln.e.args.rows = 16;
  ln.c.outputs[0].fill(0);
  ln.kernel.runEntry(ln.e.args, 2);
  std::vector<unsigned char> got = outputsOf(ln.c)[0]; // bytes of f32 elements
  const size_t written = 16 * 65 * sizeof(float);
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + written, ln.want[0].begin()));
  EXPECT_TRUE(
      std::all_of(got.begin() + written, got.end(), [](unsigned char v) { return v == 0; }));
  // Another kernel with the same shape runs its own entry.
  EntryCall rms(library::rmsNorm(), {16, 65});
  rms.c.outputs[0].fill(0);
  rms.kernel.runEntry(rms.e.args, 2);
  EXPECT_EQ(outputsOf(rms.c), rms.want);
}

TEST(Parallel, BadThreadCountsAreClearErrors) {
  Kernel k = compile(library::swiglu(), test::targetOptions());
  check::Case c = check::makeCase(k.program(), {2, 8});
  for (int bad : {0, -1, 257}) {
    try {
      k.run(c.inputRefs(), c.outputRefs(), bad);
      ADD_FAILURE() << "threads=" << bad << " accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Bind);
      EXPECT_NE(std::string(e.what()).find("thread count must be in [1, 256]"), std::string::npos)
          << e.what();
    }
    CompileOptions o = test::targetOptions();
    o.threads = bad;
    EXPECT_THROW(compile(library::swiglu(), o), Error);
  }
  ::setenv("LANEJIT_NUM_THREADS", "0", 1);
  EXPECT_THROW(CompileOptions::fromEnvironment(), Error);
  ::setenv("LANEJIT_NUM_THREADS", "3", 1);
  EXPECT_EQ(CompileOptions::fromEnvironment().threads, 3);
  ::unsetenv("LANEJIT_NUM_THREADS");
  EXPECT_FALSE(CompileOptions::fromEnvironment().threads.has_value());
}

TEST(Parallel, DefaultIsTheAffinityCount) {
  EXPECT_GE(launch::affinityThreads(), 1);
  EXPECT_EQ(launch::requestedThreads(CompileOptions{}), launch::affinityThreads());
}

} // namespace
} // namespace lanejit
