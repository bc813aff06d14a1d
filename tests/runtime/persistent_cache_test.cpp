// The persistent object cache (runtime/persistent_cache.h): a kernel
// compiled in one process is linked, not compiled, by the next; its bits are
// the compiled kernel's; damaged entries are ignored and rewritten;
// LANEJIT_CACHE=off writes nothing.
#include "runtime/persistent_cache.h"

#include "support/cache_home.h"
#include "support/command_line.h"
#include "support/testing.h"

#include <lanejit/check.h>
#include <lanejit/kernel.h>
#include <lanejit/kernel_cache.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace lanejit {
namespace {

namespace fs = std::filesystem;

// Points $XDG_CACHE_HOME at a fresh folder for one test and empties the
// in-process cache, so every compile() reaches the disk.
class PersistentCache : public ::testing::Test {
protected:
  void SetUp() override { clearKernelCache(); }
  void TearDown() override { clearKernelCache(); }

  fs::path folder() const { return scratch_.path() / "lanejit"; }
  std::vector<fs::path> files() const {
    std::vector<fs::path> found;
    if (fs::exists(folder()))
      for (const auto &e : fs::directory_iterator(folder()))
        found.push_back(e.path());
    return found;
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
  std::map<fs::path, fs::file_time_type> written;
  for (const fs::path &f : files())
    written[f] = fs::last_write_time(f);
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
  for (const auto &[f, when] : written)
    EXPECT_EQ(fs::last_write_time(f), when) << f << " was compiled and stored again";
}

TEST_F(PersistentCache, OptionsAndProgramsAreKeysOfTheirOwn) {
  compileFresh(library::layerNorm());
  CompileOptions other = test::targetOptions();
  other.specialize_full_packets = false;
  clearKernelCache();
  EXPECT_FALSE(compile(library::layerNorm(), other).report().disk_cache_hit);
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

} // namespace
} // namespace lanejit
