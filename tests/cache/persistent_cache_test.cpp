// The persistent object cache (cache/persistent_cache.h): a kernel
// compiled in one process is linked, not compiled, by the next; its bits are
// the compiled kernel's; damaged entries are ignored and rewritten;
// LANEJIT_CACHE=off writes nothing; past its size cap the least recently
// used files go, never another program's (cache/cache_bound.h).
#include "cache/persistent_cache.h"

#include "cache/cache_bound.h"

#include "support/cache_home.h"
#include "support/command_line.h"
#include "support/testing.h"

#include <lanejit/check.h>
#include <lanejit/kernel.h>
#include <lanejit/kernel_cache.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>

namespace lanejit {
namespace {

namespace fs = std::filesystem;

ino_t inodeOf(const fs::path &f) {
  struct stat st {};
  return ::stat(f.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Sets a file's times to `seconds` ago (both, as a hit does).
void age(const fs::path &f, int64_t seconds) {
  timespec when{static_cast<time_t>(std::time(nullptr) - seconds), 0};
  timespec times[2] = {when, when};
  ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0) << f;
}

// LANEJIT_CACHE_MAX_MB for a cap of `bytes` (fractions of a MiB are read
// to the byte).
void setCap(uint64_t bytes) {
  char mib[64];
  std::snprintf(mib, sizeof mib, "%.12f", static_cast<double>(bytes) / 1048576.0);
  ::setenv("LANEJIT_CACHE_MAX_MB", mib, 1);
  ASSERT_EQ(persistent::capFromEnvironment().bytes, bytes) << mib;
}

void writeFile(const fs::path &f, size_t bytes) {
  std::ofstream(f, std::ios::binary) << std::string(bytes, 'x');
}

// Points $XDG_CACHE_HOME at a fresh folder for one test and empties the
// in-process cache, so every compile() reaches the disk.
class PersistentCache : public ::testing::Test {
protected:
  void SetUp() override {
    clearKernelCache();
    ::unsetenv("LANEJIT_CACHE_MAX_MB");
  }
  void TearDown() override {
    clearKernelCache();
    ::unsetenv("LANEJIT_CACHE_MAX_MB");
  }

  fs::path folder() const { return scratch_.path() / "lanejit"; }
  // The folder's files but its usage file (the bound's running total).
  std::vector<fs::path> files() const {
    std::vector<fs::path> found;
    if (fs::exists(folder()))
      for (const auto &e : fs::directory_iterator(folder()))
        if (e.path().filename() != persistent::kUsageFile)
          found.push_back(e.path());
    return found;
  }
  // The one file a compile of `p` stored.
  fs::path storedBy(const Program &p, const CompileOptions &options = test::targetOptions()) {
    std::vector<fs::path> before = files();
    clearKernelCache();
    EXPECT_FALSE(compile(p, options).report().disk_cache_hit) << p.name;
    std::vector<fs::path> added;
    for (const fs::path &f : files())
      if (std::find(before.begin(), before.end(), f) == before.end())
        added.push_back(f);
    EXPECT_EQ(added.size(), 1u) << p.name;
    return added.empty() ? fs::path() : added[0];
  }
  // A fresh compile() (the in-process cache emptied first).
  static Kernel compileFresh(const Program &p) {
    clearKernelCache();
    return compile(p, test::targetOptions());
  }
  // The outputs' bytes after running `k` on fixture data at 17 x 66.
  static std::string outputsOf(const Kernel &k) {
    check::Case c = check::makeCase(k.program(), {17, 66});
    k.run(c.inputRefs(), c.outputRefs());
    std::string bytes;
    for (const check::GuardedBuffer &o : c.outputs)
      bytes.append(reinterpret_cast<const char *>(o.data()), o.rows() * o.cols() * sizeof(float));
    return bytes;
  }

  test::CacheHome scratch_{"persistent_cache"};
};

TEST_F(PersistentCache, ASecondCompileLinksTheStoredObjectWithTheSameBits) {
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    Kernel first = compileFresh(e.make());
    EXPECT_FALSE(first.report().disk_cache_hit);
    Kernel second = compileFresh(e.make());
    EXPECT_TRUE(second.report().disk_cache_hit);
    EXPECT_EQ(second.object(), first.object());
    EXPECT_EQ(second.report().specialized_bodies, first.report().specialized_bodies);
    EXPECT_EQ(outputsOf(second), outputsOf(first));
    check::Case c = check::makeCase(second.program(), {5, 34}, check::Fill::Random);
    EXPECT_TRUE(test::runMatchesReference(second, c));
  }
  EXPECT_EQ(files().size(), library::all().size());
}

TEST_F(PersistentCache, EntriesForOneCAreStoredAndLinkedBackUnchanged) {
  // Before: the kernel's own entry.
  Kernel first = compileFresh(library::rmsNorm());
  ASSERT_EQ(files().size(), 1u);
  // A narrow call's rows-across-lanes entry and a short row's C entry are
  // compiled at their first use, and each is stored.
  ASSERT_NE(first.nativeEntry(4096, 8), nullptr);
  ASSERT_NE(first.nativeEntry(17, 65), nullptr);
  ASSERT_EQ(files().size(), 3u);
  // Identified by inode: a store renames a new file into place, while a
  // hit only sets the time.
  std::map<fs::path, ino_t> written;
  for (const fs::path &f : files())
    written[f] = inodeOf(f);
  check::Case narrow = check::makeCase(first.program(), {4096, 8}, check::Fill::Random);
  first.run(narrow.inputRefs(), narrow.outputRefs());
  std::vector<float> want(narrow.outputs[0].data(), narrow.outputs[0].data() + 4096 * 8);
  // Expected: a fresh kernel links all three from disk (no file rewritten)
  // with the same bits.
  Kernel second = compileFresh(library::rmsNorm());
  EXPECT_TRUE(second.report().disk_cache_hit);
  EXPECT_NE(second.nativeEntry(4096, 8), nullptr);
  EXPECT_NE(second.nativeEntry(17, 65), nullptr);
  second.run(narrow.inputRefs(), narrow.outputRefs());
  EXPECT_EQ(std::vector<float>(narrow.outputs[0].data(), narrow.outputs[0].data() + 4096 * 8),
            want);
  EXPECT_EQ(files().size(), 3u);
  for (const auto &[f, inode] : written)
    EXPECT_EQ(inodeOf(f), inode) << f << " was compiled and stored again";
}

TEST_F(PersistentCache, OptionsAndProgramsAreKeysOfTheirOwn) {
  compileFresh(library::layerNorm());
  CompileOptions other = test::targetOptions();
  other.specialize_full_packets = false;
  fs::path added = storedBy(library::layerNorm(), other);
  EXPECT_FALSE(compileFresh(library::rmsNorm()).report().disk_cache_hit);
  EXPECT_EQ(files().size(), 3u);
}

TEST_F(PersistentCache, DamagedEntriesAreIgnoredAndRewritten) {
  Kernel good = compileFresh(library::swiglu());
  ASSERT_EQ(files().size(), 1u);
  fs::path file = files()[0];
  std::string original = test::slurp(file);
  // A flipped byte in the object, a truncation, and garbage.
  std::string flipped = original;
  flipped[flipped.size() - 10] ^= 0x40;
  for (const std::string &damaged : {flipped, original.substr(0, original.size() / 2),
                                     std::string("not a cache file"), std::string()}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    Kernel k = compileFresh(library::swiglu());
    EXPECT_FALSE(k.report().disk_cache_hit);
    EXPECT_EQ(outputsOf(k), outputsOf(good));
    // Rewritten whole (the entry's symbol name may differ): the next
    // process-fresh compile links it.
    EXPECT_GT(test::slurp(file).size(), original.size() / 2);
    EXPECT_TRUE(compileFresh(library::swiglu()).report().disk_cache_hit);
  }
}

TEST_F(PersistentCache, OffWritesAndReadsNothing) {
  ::setenv("LANEJIT_CACHE", "off", 1);
  EXPECT_FALSE(compileFresh(library::rope()).report().disk_cache_hit);
  EXPECT_FALSE(compileFresh(library::rope()).report().disk_cache_hit);
  EXPECT_TRUE(files().empty());
  ::unsetenv("LANEJIT_CACHE");
  compileFresh(library::rope());
  ::setenv("LANEJIT_CACHE", "off", 1);
  EXPECT_FALSE(compileFresh(library::rope()).report().disk_cache_hit);
}

TEST_F(PersistentCache, AnUnwritableFolderOnlyCostsTheCache) {
  std::ofstream(scratch_.file("lanejit")) << "a file where the folder should be";
  Kernel k = compileFresh(library::rmsNorm());
  EXPECT_FALSE(k.report().disk_cache_hit);
  check::Case c = check::makeCase(k.program(), {3, 17}, check::Fill::Random);
  EXPECT_TRUE(test::runMatchesReference(k, c));
}

// The second process: run by SecondProcessCompilesNothing (it sets
// LANEJIT_PERSISTENT_CHILD), prints whether every kernel came from disk.
TEST(PersistentCacheChild, CompileTheLibrary) {
  if (!std::getenv("LANEJIT_PERSISTENT_CHILD"))
    GTEST_SKIP() << "run as a child process only";
  for (const library::Entry &e : library::all())
    std::printf("%s disk=%d\n", e.name.c_str(),
                compile(e.make(), test::targetOptions()).report().disk_cache_hit ? 1 : 0);
}

TEST_F(PersistentCache, SecondProcessCompilesNothing) {
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string args = "--gtest_filter=PersistentCacheChild.CompileTheLibrary";
  std::string env = "LANEJIT_PERSISTENT_CHILD=1 XDG_CACHE_HOME='" + scratch_.path().string() + "' ";
  std::string command = env + "'" + self + "' " + args;
  test::ScratchDir out("persistent_child");
  // Two children at once fill the empty cache (racing writers), a third reads it.
  std::string both = "(" + command + " > '" + out.file("a") + "' & " + command + " > '" +
                     out.file("b") + "'; wait)";
  ASSERT_EQ(test::shell(both), 0);
  ASSERT_EQ(test::shell(command + " > '" + out.file("c") + "'"), 0);
  std::string third = test::slurp(out.file("c"));
  for (const library::Entry &e : library::all())
    EXPECT_NE(third.find(e.name + " disk=1"), std::string::npos) << third;
  EXPECT_EQ(files().size(), library::all().size()) << "no temporary file left behind";
}

TEST_F(PersistentCache, ProcessesPruningAtOnceOnlyMissMore) {
  // Before: a cap of about three kernels, so most stores prune.
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string command = "LANEJIT_PERSISTENT_CHILD=1 LANEJIT_CACHE_MAX_MB=0.03 XDG_CACHE_HOME='" +
                        scratch_.path().string() + "' '" + self +
                        "' --gtest_filter=PersistentCacheChild.CompileTheLibrary";
  test::ScratchDir out("persistent_prune_child");
  // Action: three processes compile the library at once, twice over.
  std::string all = "(";
  for (const char *name : {"a", "b", "c"})
    all +=
        command + " > '" + out.file(name) + "' && " + command + " >> '" + out.file(name) + "' & ";
  all += "wait)";
  ASSERT_EQ(test::shell(all), 0);
  // Expected: every compile succeeded (a file removed under a reader is a
  // miss) and no temporary is left. (The total may lag behind the folder
  // here: a store that finds another process scanning skips its scan.)
  for (const char *name : {"a", "b", "c"}) {
    std::string printed = test::slurp(out.file(name));
    for (const library::Entry &e : library::all())
      EXPECT_NE(printed.find(e.name + " disk="), printed.rfind(e.name + " disk=")) << printed;
  }
  EXPECT_EQ(persistent::usage(folder().string()).temporaries, 0u);
}

TEST_F(PersistentCache, PastTheCapTheLeastRecentlyUsedEntriesGo) {
  // Before: every library kernel stored, a minute apart from the oldest,
  // the first; the first then loaded again (a hit makes it the newest).
  std::vector<library::Entry> all = library::all();
  std::vector<fs::path> stored;
  std::vector<std::string> bits;
  for (const library::Entry &e : all) {
    stored.push_back(storedBy(e.make()));
    bits.push_back(outputsOf(compile(e.make(), test::targetOptions())));
  }
  ASSERT_EQ(stored.size(), 6u);
  for (size_t i = 0; i < stored.size(); ++i)
    age(stored[i], 3600 - 60 * static_cast<int64_t>(i));
  ASSERT_TRUE(compileFresh(all[0].make()).report().disk_cache_hit);
  // A cap they just fit in.
  uint64_t cap = persistent::usage(folder().string()).bytes;
  setCap(cap);
  // Action: one more kernel (layernorm under other options).
  CompileOptions other = test::targetOptions();
  other.specialize_full_packets = false;
  fs::path added = storedBy(library::layerNorm(), other);
  // Expected: lanejit's files at most 80% of the cap; the oldest untouched
  // entry gone, the loaded one and the new one kept, and only older
  // entries removed than any kept.
  persistent::Usage after = persistent::usage(folder().string());
  EXPECT_LE(after.bytes, cap - cap / 5);
  EXPECT_EQ(after.objects, files().size());
  EXPECT_FALSE(fs::exists(stored[1])) << all[1].name << " was the least recently used";
  EXPECT_TRUE(fs::exists(stored[0])) << all[0].name << " was loaded last";
  EXPECT_TRUE(fs::exists(added));
  size_t kept = 0;
  for (size_t i = 1; i < stored.size(); ++i) {
    if (fs::exists(stored[i]))
      ++kept;
    else
      EXPECT_EQ(kept, 0u) << all[i].name << " removed after a younger one was kept";
  }
  EXPECT_LT(kept, 5u);
  // A removed entry is compiled again, with the same bits, and stored.
  Kernel again = compileFresh(all[1].make());
  EXPECT_FALSE(again.report().disk_cache_hit);
  EXPECT_EQ(outputsOf(again), bits[1]);
  EXPECT_TRUE(fs::exists(stored[1]));
  EXPECT_TRUE(compileFresh(all[1].make()).report().disk_cache_hit);
  EXPECT_LE(persistent::usage(folder().string()).bytes, cap);
}

TEST_F(PersistentCache, StoresScanOnlyWhenTheTotalPassesTheCap) {
  // Before: one kernel stored (its store started the running total), and
  // a temporary a crashed process left two hours ago.
  storedBy(library::rope());
  ASSERT_TRUE(fs::exists(folder() / persistent::kUsageFile));
  fs::path stale = folder() / (std::string(64, 'a') + ".o.cache.tmp.4242.0");
  writeFile(stale, 100);
  age(stale, 2 * 3600);
  // Action: a hit and a store under the cap.
  EXPECT_TRUE(compileFresh(library::rope()).report().disk_cache_hit);
  storedBy(library::swiglu());
  // Expected: no scan (the temporary is still there).
  EXPECT_TRUE(fs::exists(stale));
  // Action: a store that takes the running total past the cap (the total
  // as the usage file keeps it: the two entries).
  uint64_t total = 0;
  std::ifstream(folder() / persistent::kUsageFile) >> total;
  ASSERT_GT(total, 0u);
  setCap(total);
  storedBy(library::rmsNorm());
  // Expected: a scan: the temporary removed, the folder under the cap.
  EXPECT_FALSE(fs::exists(stale));
  uint64_t cap = persistent::capFromEnvironment().bytes;
  EXPECT_LE(persistent::usage(folder().string()).bytes, cap - cap / 5);
  // A damaged total (a crash mid-write) makes the next store scan.
  writeFile(stale, 100);
  age(stale, 2 * 3600);
  ::unsetenv("LANEJIT_CACHE_MAX_MB");
  std::ofstream(folder() / persistent::kUsageFile, std::ios::trunc) << "12 x";
  storedBy(library::geluResidual());
  EXPECT_FALSE(fs::exists(stale));
}

TEST_F(PersistentCache, PruningRemovesOnlyLanejitsFilesAndNoYoungTemporary) {
  // Before: two entries, temporaries young and stale, and files that only
  // look like lanejit's, all of them old.
  fs::create_directories(folder());
  std::string hex(64, 'c');
  std::vector<std::string> ours = {hex + ".o.cache", std::string(64, 'd') + ".tune"};
  std::string young = hex + ".o.cache.tmp.77.3";
  std::vector<std::string> stale = {hex + ".o.cache.tmp.77.1", hex + ".tune.tmp.78.0"};
  std::vector<std::string> foreign = {"notes.txt",
                                      "abc.o.cache",
                                      std::string(64, 'C') + ".o.cache",
                                      std::string(63, 'c') + ".tune",
                                      hex + ".o.cache.bak",
                                      hex + ".o.cache.tmp.x.1",
                                      hex + ".o.cache.tmp.77",
                                      hex + ".tune.tmp.1.2.3"};
  for (const std::string &name : ours)
    writeFile(folder() / name, 5000);
  for (const std::string &name : stale)
    writeFile(folder() / name, 100);
  for (const std::string &name : foreign)
    writeFile(folder() / name, 5000);
  fs::create_directory(folder() / (std::string(64, 'e') + ".o.cache")); // a folder
  fs::create_symlink("notes.txt", folder() / (std::string(64, 'f') + ".o.cache"));
  for (const fs::path &f : files())
    age(f, 2 * 3600);
  writeFile(folder() / young, 100);
  persistent::Usage before = persistent::usage(folder().string());
  EXPECT_EQ(before.objects, 1u);
  EXPECT_EQ(before.tune_records, 1u);
  EXPECT_EQ(before.temporaries, 3u);
  EXPECT_EQ(before.foreign, foreign.size() + 2);
  // Action: a scan with no cap, then one with a cap of one byte.
  persistent::prune(folder().string(), 0);
  // Expected: only the stale temporaries go, then every entry of
  // lanejit's, but never the young temporary nor another program's file.
  for (const std::string &name : stale)
    EXPECT_FALSE(fs::exists(folder() / name)) << name;
  for (const std::string &name : ours)
    EXPECT_TRUE(fs::exists(folder() / name)) << name;
  persistent::Pruned pruned = persistent::prune(folder().string(), 1);
  EXPECT_EQ(pruned.removed_files, 2u);
  for (const std::string &name : ours)
    EXPECT_FALSE(fs::exists(folder() / name)) << name;
  EXPECT_TRUE(fs::exists(folder() / young));
  EXPECT_EQ(pruned.bytes_after, persistent::usage(folder().string()).bytes);
  for (const std::string &name : foreign)
    EXPECT_TRUE(fs::exists(folder() / name)) << name;
  EXPECT_TRUE(fs::is_directory(folder() / (std::string(64, 'e') + ".o.cache")));
  EXPECT_TRUE(fs::is_symlink(folder() / (std::string(64, 'f') + ".o.cache")));
  // Clearing removes the young temporary too, and still nothing foreign.
  persistent::Usage cleared = persistent::clear(folder().string());
  EXPECT_EQ(cleared.temporaries, 1u);
  EXPECT_FALSE(fs::exists(folder() / young));
  EXPECT_EQ(files().size(), foreign.size() + 2);
}

TEST(PersistentCacheCap, LanejitCacheMaxMbIsANumberOfMiB) {
  EXPECT_EQ(persistent::parseCapMb("256"), uint64_t{256} << 20);
  EXPECT_EQ(persistent::parseCapMb("0.5"), uint64_t{512} << 10);
  EXPECT_EQ(persistent::parseCapMb("0"), 0u);         // unbounded
  EXPECT_EQ(persistent::parseCapMb("0.000"), 0u);     // unbounded
  EXPECT_EQ(persistent::parseCapMb("0.0000001"), 1u); // a cap, however small
  for (const char *bad : {"", "abc", "-1", "+5", "1e3", "12MB", " 5", "5 ", "1.", ".5", "1.2.3",
                          "0x10", "inf", "nan"})
    EXPECT_FALSE(persistent::parseCapMb(bad).has_value()) << bad;
  // From the environment: unset or empty, the default; invalid, the
  // default, and what was ignored.
  ::unsetenv("LANEJIT_CACHE_MAX_MB");
  EXPECT_EQ(persistent::capFromEnvironment().bytes, persistent::kDefaultCapBytes);
  EXPECT_FALSE(persistent::capFromEnvironment().from_environment);
  ::setenv("LANEJIT_CACHE_MAX_MB", "", 1);
  EXPECT_EQ(persistent::capFromEnvironment().bytes, persistent::kDefaultCapBytes);
  ::setenv("LANEJIT_CACHE_MAX_MB", "1G", 1);
  persistent::Cap cap = persistent::capFromEnvironment();
  EXPECT_EQ(cap.bytes, persistent::kDefaultCapBytes);
  EXPECT_EQ(cap.ignored, "1G");
  ::setenv("LANEJIT_CACHE_MAX_MB", "1024", 1);
  EXPECT_EQ(persistent::capFromEnvironment().bytes, uint64_t{1} << 30);
  EXPECT_TRUE(persistent::capFromEnvironment().from_environment);
  ::unsetenv("LANEJIT_CACHE_MAX_MB");
}

} // namespace
} // namespace lanejit
