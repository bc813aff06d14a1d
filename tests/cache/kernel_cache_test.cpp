// The kernel cache behind compile(): bounded by bytes with LRU eviction,
// evicted kernels keep working, concurrent compiles of one program share one
// build, and failed builds are not cached.
#include "cache/kernel_cache.h"

#include "support/testing.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/kernel_cache.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace lanejit {
namespace {

// Distinct programs of one size: y = x * (1000 + n) for n < 9000.
Program scaleBy(int n) {
  ProgramBuilder b("scale");
  Expr x = b.rows("x");
  b.output("y", x * static_cast<float>(1000 + n));
  return b.build();
}

// Starts every test from an empty cache with room for everything.
class KernelCache : public ::testing::Test {
protected:
  void SetUp() override {
    setKernelCacheCapacity(size_t{1} << 30);
    clearKernelCache();
  }
  void TearDown() override { setKernelCacheCapacity(size_t{64} << 20); }

  // Bytes of one scaleBy entry, measured on a program no test uses.
  static size_t entryBytes() {
    clearKernelCache();
    compile(scaleBy(8999));
    size_t bytes = kernelCacheStats().bytes;
    clearKernelCache();
    return bytes;
  }

  // Whether compiling `p` now is answered without a build.
  static bool hit(const Program &p) { return compile(p).report().cache_hit; }
};

TEST_F(KernelCache, ASecondCompileIsAHit) {
  EXPECT_FALSE(hit(scaleBy(1)));
  EXPECT_TRUE(hit(scaleBy(1)));
  KernelCacheStats s = kernelCacheStats();
  EXPECT_EQ(s.entries, 1u);
  EXPECT_GT(s.bytes, 0u);
}

TEST_F(KernelCache, TheLeastRecentlyUsedEntryGoesFirst) {
  size_t one = entryBytes();
  // Room for three entries of this size, not four.
  setKernelCacheCapacity(3 * one + one / 2);
  compile(scaleBy(0));
  compile(scaleBy(1));
  compile(scaleBy(2));
  EXPECT_TRUE(hit(scaleBy(0))); // 0 is now the most recent; 1 the least
  compile(scaleBy(3));          // evicts 1
  EXPECT_EQ(kernelCacheStats().evictions, 1u);
  EXPECT_TRUE(hit(scaleBy(0)));
  EXPECT_TRUE(hit(scaleBy(2)));
  EXPECT_TRUE(hit(scaleBy(3)));
  EXPECT_FALSE(hit(scaleBy(1)));
}

TEST_F(KernelCache, ItsBytesNeverPassTheCapacity) {
  size_t capacity = 5 * entryBytes();
  setKernelCacheCapacity(capacity);
  for (int n = 0; n < 40; ++n) {
    compile(scaleBy(n));
    ASSERT_LE(kernelCacheStats().bytes, capacity) << "after " << n + 1 << " programs";
  }
  KernelCacheStats s = kernelCacheStats();
  EXPECT_LE(s.entries, 5u);
  EXPECT_GE(s.evictions, 35u);
}

TEST_F(KernelCache, LoweringTheCapacityEvicts) {
  for (int n = 0; n < 4; ++n)
    compile(scaleBy(n));
  setKernelCacheCapacity(0);
  KernelCacheStats s = kernelCacheStats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_FALSE(hit(scaleBy(0)));
  EXPECT_FALSE(hit(scaleBy(0))) << "capacity 0 keeps nothing";
}

TEST_F(KernelCache, AnEvictedKernelStillRunsAndIsFreedWithItsLastHolder) {
  uint64_t before = kernelCacheStats().live_code;
  {
    Kernel k = compile(library::swiglu());
    EXPECT_EQ(kernelCacheStats().live_code, before + 1);
    clearKernelCache();
    EXPECT_EQ(kernelCacheStats().live_code, before + 1) << "the kernel still holds its code";
    check::Case c = check::makeCase(library::swiglu(), {17, 65});
    EXPECT_TRUE(test::runMatchesReference(k, c));
  }
  EXPECT_EQ(kernelCacheStats().live_code, before) << "the last holder frees the code";
}

TEST_F(KernelCache, CodeFreedByEvictionLeavesOtherKernelsIntact) {
  Kernel kept = compile(library::rmsNorm());
  for (int n = 0; n < 20; ++n) {
    compile(scaleBy(n));
    clearKernelCache(); // frees each scale kernel's code at once
  }
  check::Case c = check::makeCase(library::rmsNorm(), {17, 65});
  EXPECT_TRUE(test::runMatchesReference(kept, c));
  Kernel again = compile(scaleBy(3));
  check::Case d = check::makeCase(scaleBy(3), {5, 33});
  EXPECT_TRUE(test::runMatchesReference(again, d));
}

TEST_F(KernelCache, ThreadsCompilingOneProgramShareOneBuild) {
  constexpr int kThreads = 8;
  uint64_t builds = kernelCacheStats().builds;
  std::atomic<int> ready{0};
  std::vector<NativeEntry> entries(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) {
      }
      entries[t] = compile(library::geluResidual()).nativeEntry();
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(kernelCacheStats().builds, builds + 1);
  for (NativeEntry e : entries)
    EXPECT_EQ(e, entries[0]);
}

TEST_F(KernelCache, AFailedBuildReachesEveryWaiterAndIsNotCached) {
  CompileOptions bad;
  bad.lanes = 3; // rejected while building
  constexpr int kThreads = 6;
  std::atomic<int> ready{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      ++ready;
      while (ready.load() < kThreads) {
      }
      try {
        compile(library::swiglu(), bad);
      } catch (const Error &e) {
        if (std::string(e.what()).find("lanes must be 4, 8 or 16") != std::string::npos)
          ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), kThreads);
  EXPECT_EQ(kernelCacheStats().entries, 0u);
  uint64_t builds = kernelCacheStats().builds;
  EXPECT_THROW(compile(library::swiglu(), bad), Error);
  EXPECT_EQ(kernelCacheStats().builds, builds + 1) << "a failure is tried again, not cached";
}

TEST(KernelCacheCapacity, ParsesBytesWithBinarySuffixes) {
  EXPECT_EQ(parseCacheCapacity("V", "0"), 0u);
  EXPECT_EQ(parseCacheCapacity("V", "4096"), 4096u);
  EXPECT_EQ(parseCacheCapacity("V", "64M"), size_t{64} << 20);
  EXPECT_EQ(parseCacheCapacity("V", "3k"), size_t{3} << 10);
  EXPECT_EQ(parseCacheCapacity("V", "2G"), size_t{2} << 30);
}

TEST(KernelCacheCapacity, RejectsAnythingElseNamingTheVariable) {
  for (const char *bad :
       {"", "abc", "-1", "5X", "5MB", " 5", "1e6", "99999999999999999999", "17179869184G"}) {
    try {
      parseCacheCapacity("LANEJIT_KERNEL_CACHE_BYTES", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("LANEJIT_KERNEL_CACHE_BYTES="), std::string::npos);
    }
  }
}

} // namespace
} // namespace lanejit
