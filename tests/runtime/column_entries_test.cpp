// Entries specialised per column count (cache/column_entries.h,
// CompileOptions::specialize_columns): which calls get one, and that they
// give bit for bit the generic entry's outputs.
#include "cache/column_entries.h"
#include "support/aliased_call.h"
#include "support/testing.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <cstring>
#include <set>
#include <thread>

namespace lanejit {
namespace {

void fakeEntry(const LaunchArgs *, int64_t, int64_t) {}

// Before: a table and a build that counts its calls. Expected: requests
// without `now` are unsettled until the third for a C, which builds; later
// requests find it without building; `now` builds at once; out-of-range C
// and a failed build settle on the generic entry (null).
TEST(ColumnEntries, TieringCountsRequestsPerColumnCount) {
  cache::ColumnEntries table;
  int builds = 0;
  auto build = [&](int64_t cols, std::shared_ptr<void> &) -> NativeEntry {
    ++builds;
    if (cols == 13)
      throw Error(Error::Kind::Compile, "no entry for 13");
    return &fakeEntry;
  };
  for (int call = 1; call < cache::kCallsBeforeSpecializing; ++call) {
    cache::ColumnEntries::Found f = table.find(65, cache::BuildWhen::OnRepeat, build);
    EXPECT_EQ(f.entry, nullptr);
    EXPECT_FALSE(f.settled);
    EXPECT_FALSE(table.find(66, cache::BuildWhen::OnRepeat, build).settled); // counted apart
  }
  EXPECT_EQ(builds, 0);
  cache::ColumnEntries::Found third = table.find(65, cache::BuildWhen::OnRepeat, build);
  EXPECT_EQ(third.entry, &fakeEntry);
  EXPECT_TRUE(third.settled);
  EXPECT_EQ(table.find(65, cache::BuildWhen::OnRepeat, build).entry, &fakeEntry);
  EXPECT_EQ(builds, 1);

  EXPECT_EQ(table.find(7, cache::BuildWhen::Now, build).entry, &fakeEntry);
  EXPECT_EQ(builds, 2);
  cache::ColumnEntries::Found failed = table.find(13, cache::BuildWhen::Now, build);
  EXPECT_EQ(failed.entry, nullptr);
  EXPECT_TRUE(failed.settled);
  EXPECT_EQ(table.find(13, cache::BuildWhen::Now, build).entry, nullptr); // not retried
  EXPECT_EQ(builds, 3);
  for (int64_t cols : {int64_t{0}, cache::kMaxSpecializedColumns + 1}) {
    cache::ColumnEntries::Found f = table.find(cols, cache::BuildWhen::Now, build);
    EXPECT_EQ(f.entry, nullptr);
    EXPECT_TRUE(f.settled);
  }
  EXPECT_EQ(builds, 3);
}

CompileOptions withSpecialization(bool on, int lanes = 0) {
  CompileOptions o = test::targetOptions();
  o.specialize_columns = on;
  o.rows_across_lanes = false; // rows_across_lanes_test.cpp covers that mapping
  o.lanes = lanes;
  return o;
}

// Before: one kernel. Expected: calls of 1..1024 columns have an entry of
// their own, the same one on every request; other column counts, and the
// kernel compiled with the switch off, have the generic entry.
TEST(ColumnEntries, ShortRowsGetTheirOwnEntry) {
  Kernel k = compile(library::rmsNorm(), withSpecialization(true));
  NativeEntry generic = k.nativeEntry();
  NativeEntry at65 = k.nativeEntry(1, 65);
  EXPECT_NE(at65, generic);
  EXPECT_EQ(k.nativeEntry(1, 65), at65);
  EXPECT_NE(k.nativeEntry(1, 1024), generic);
  EXPECT_NE(k.nativeEntry(1, 1), generic);
  EXPECT_EQ(k.nativeEntry(1, 1025), generic);
  EXPECT_EQ(k.nativeEntry(1, 0), generic);
  EXPECT_EQ(k.nativeEntry(1, -3), generic);

  Kernel off = compile(library::rmsNorm(), withSpecialization(false));
  EXPECT_EQ(off.nativeEntry(1, 65), off.nativeEntry());
}

// Before: nine distinct short column counts. Expected: eight specialised
// entries (the table's size), then the generic entry.
TEST(ColumnEntries, AtMostEightPerKernel) {
  Kernel k = compile(library::swiglu(), withSpecialization(true));
  std::set<NativeEntry> seen;
  for (int64_t c = 1; c <= 8; ++c)
    seen.insert(k.nativeEntry(1, c));
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen.count(k.nativeEntry()), 0u);
  EXPECT_EQ(k.nativeEntry(1, 9), k.nativeEntry());
  EXPECT_EQ(k.nativeEntry(1, 5), k.nativeEntry(1, 5)); // built ones stay
}

// Before: threads asking for the same and different column counts at once.
// Expected: one entry per C, every thread sees it.
TEST(ColumnEntries, ConcurrentRequestsAgree) {
  Kernel k = compile(library::layerNorm(), withSpecialization(true));
  constexpr int kThreads = 6;
  std::vector<NativeEntry> got(kThreads * 2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      got[2 * t] = k.nativeEntry(1, 17);
      got[2 * t + 1] = k.nativeEntry(1, 18 + t % 2);
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(got[2 * t], k.nativeEntry(1, 17));
    EXPECT_EQ(got[2 * t + 1], k.nativeEntry(1, 18 + t % 2));
  }
  EXPECT_NE(k.nativeEntry(1, 18), k.nativeEntry(1, 19));
}

// Runs `k` on a fresh case and returns every output's bits (row padding
// included); the outputs must match the FP64 oracle.
std::vector<std::vector<uint32_t>> outputsOf(const Kernel &k, const Program &p, Shape shape,
                                             int64_t pad) {
  check::Case c = check::makeCase(p, shape, check::Fill::Random, 11, pad);
  EXPECT_TRUE(test::runMatchesReference(k, c));
  std::vector<std::vector<uint32_t>> bits;
  for (const check::GuardedBuffer &out : c.outputs) {
    bits.emplace_back(out.elements());
    if (out.elements())
      std::memcpy(bits.back().data(), out.data(), out.elements() * sizeof(float));
  }
  return bits;
}

// Before: every library program at every tail of W = 4 and 8 (and 16),
// dense and strided rows, with specialised entries and with the generic
// one. Expected: the same bits.
TEST(ColumnEntries, SameBitsAsTheGenericEntry) {
  for (const library::Entry &e : library::all()) {
    const std::string &name = e.name;
    Program p = e.make();
    int64_t multiple = name == "rope" ? 2 : 1;
    for (int lanes : {4, 8, 16}) {
      Kernel generic = compile(p, withSpecialization(false, lanes));
      Kernel special = compile(p, withSpecialization(true, lanes));
      int used = 0;
      for (int64_t cols : test::sweepColumns(lanes, multiple)) {
        if (cols > cache::kMaxSpecializedColumns)
          continue;
        for (int64_t rows : {1, 5})
          for (int64_t pad : {0, 3}) {
            SCOPED_TRACE(testing::Message()
                         << name << " W=" << lanes << " " << rows << "x" << cols << " pad " << pad);
            // A ninth C runs generic code: the first eight are the test.
            used += special.nativeEntry(1, cols) != special.nativeEntry();
            EXPECT_EQ(outputsOf(special, p, {rows, cols}, pad),
                      outputsOf(generic, p, {rows, cols}, pad));
          }
      }
      EXPECT_GT(used, 0) << name;
    }
  }
}

// Before: in-place calls (every output exactly on an input of its shape)
// through specialised entries. Expected: the bits of the same kernel on
// separate buffers, and the oracle's values.
TEST(ColumnEntries, InPlaceCalls) {
  for (const library::Entry &e : library::all()) {
    Program p = e.make();
    Kernel k = compile(p, withSpecialization(true));
    for (int64_t cols : {6, 18, 66}) {
      test::Layout l = test::separateLayout(p, {9, cols});
      for (const test::Placed &in : l.inputs)
        if (in.cols == l.outputs[0].cols && in.rows == l.outputs[0].rows) {
          l.outputs[0].at = in.at; // same stride: separateLayout packs rows densely
          break;
        }
      SCOPED_TRACE(test::describe(l));
      EXPECT_NE(k.nativeEntry(1, cols), k.nativeEntry());
      EXPECT_TRUE(test::runAliased(k, l, 5));
    }
  }
}

} // namespace
} // namespace lanejit
