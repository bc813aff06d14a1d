// jit::loadObject, lanejit's loader for its own kernel objects: the code it
// maps computes what the system linker's copy of the same object computes,
// it resolves the runtime's imports (an object from the system compiler
// stands in for a kernel that calls them: lanejit's kernels fill and copy
// with vector stores), and it refuses what it cannot load.
#include "jit/object_loader.h"

#include "support/command_line.h"
#include "support/entry_args.h"
#include "support/testing.h"

#include <lanejit/aot.h>
#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace lanejit::jit {
namespace {

void runEntry(uint64_t entry, check::Case &c, const Kernel &k) {
  test::EntryArgs e(k, c);
  reinterpret_cast<NativeEntry>(entry)(&e.args, 0, c.shape.rows);
}

std::string loadError(const std::string &object, const std::string &entry) {
  try {
    loadObject(object, entry);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(ObjectLoader, LoadedCodeMatchesTheSystemLinkersCopy) {
  // Before: each library kernel's object, linked by `cc -shared` and
  // dlopen (an independent linker) and by the loader.
  test::ScratchDir dir("lanejit_object_loader");
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    Kernel k = compile(e.make(), test::targetOptions());
    LinkedCode loaded = loadObject(k.object(), k.entrySymbol());
    NativeEntry linked = aot::linkShared(aot::build(k), dir.file(e.name));
    Shape shape{5, e.name == std::string("rope") ? 98 : 97};
    check::Case viaLoader = check::makeCase(k.program(), shape, check::Fill::Random);
    check::Case viaLinker = viaLoader;
    runEntry(loaded.entry, viaLoader, k);
    test::EntryArgs args(k, viaLinker);
    linked(&args.args, 0, shape.rows);
    // Expected: the same bits, and the oracle's values.
    for (size_t i = 0; i < viaLoader.outputs.size(); ++i)
      EXPECT_EQ(viaLoader.outputs[i].hash(), viaLinker.outputs[i].hash());
    EXPECT_TRUE(test::matchesReference(viaLoader));
  }
}

// An object from the system compiler that calls the runtime's memset and
// memcpy (through the loader's stubs) and keeps a counter in writable
// data, and one that imports a symbol kernels may not use.
std::string cObject(const std::string &name, const std::string &source) {
  test::ScratchDir dir("lanejit_object_loader_c");
  std::ofstream(dir.file(name + ".c")) << source;
  std::string cmd =
      "cc -O2 -fPIC -c '" + dir.file(name + ".c") + "' -o '" + dir.file(name + ".o") + "'";
  EXPECT_EQ(test::shell(cmd), 0) << cmd;
  return test::slurp(dir.file(name + ".o"));
}

TEST(ObjectLoader, ResolvesTheRuntimesMemoryRoutines) {
  std::string object = cObject("fill", R"(
#include <string.h>
static long calls;
long fill_then_copy(char *a, char *b, long n) {
  memset(a, 7, n);
  memcpy(b, a, n);
  return ++calls;
}
)");
  LinkedCode loaded = loadObject(object, "fill_then_copy");
  auto fillThenCopy = reinterpret_cast<long (*)(char *, char *, long)>(loaded.entry);
  std::vector<char> a(1000, 0), b(1000, 0);
  EXPECT_EQ(fillThenCopy(a.data(), b.data(), 999), 1);
  EXPECT_EQ(fillThenCopy(a.data(), b.data(), 999), 2); // its data is writable
  EXPECT_EQ(std::count(a.begin(), a.end(), 7), 999);
  EXPECT_EQ(b, a);
}

TEST(ObjectLoader, RefusesAnImportKernelsMayNotUse) {
  std::string object = cObject("sink", R"(
void external_sink(float *);
void entry(float *p) { external_sink(p); }
)");
  std::string error = loadError(object, "entry");
  EXPECT_TRUE(test::has(error, "imports 'external_sink'")) << error;
}

TEST(ObjectLoader, RefusesWhatIsNotItsObjectFormat) {
  Kernel k = compile(library::rmsNorm(), test::targetOptions());
  const std::string &object = k.object();
  // Truncated anywhere past the header: the section table or a section
  // lies outside the bytes.
  for (size_t size :
       {size_t{0}, size_t{10}, sizeof(Elf64_Ehdr), object.size() / 2, object.size() - 1}) {
    SCOPED_TRACE(size);
    EXPECT_FALSE(loadError(object.substr(0, size), k.entrySymbol()).empty());
  }
  // The host's object labelled as the other architecture's.
  std::string otherMachine = object;
  uint16_t other = hostElfMachine() == EM_X86_64 ? EM_AARCH64 : EM_X86_64;
  std::memcpy(otherMachine.data() + offsetof(Elf64_Ehdr, e_machine), &other, 2);
  EXPECT_TRUE(test::has(loadError(otherMachine, k.entrySymbol()), "not a relocatable"));
  std::string shared = object;
  uint16_t dyn = ET_DYN;
  std::memcpy(shared.data() + offsetof(Elf64_Ehdr, e_type), &dyn, 2);
  EXPECT_TRUE(test::has(loadError(shared, k.entrySymbol()), "not a relocatable"));
  EXPECT_TRUE(test::has(loadError(std::string(sizeof(Elf64_Ehdr), 'x'), k.entrySymbol()),
                        "not a 64-bit little-endian ELF"));
  EXPECT_TRUE(test::has(loadError(object, "no_such_entry"), "defines no function 'no_such_entry'"));
  // The symbol table's string table turned into a section without bytes
  // (SHT_NOBITS): its names would be read from outside the object.
  std::string noStrings = object;
  Elf64_Ehdr header;
  std::memcpy(&header, noStrings.data(), sizeof header);
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symtab;
    std::memcpy(&symtab, noStrings.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof symtab);
    if (symtab.sh_type != SHT_SYMTAB)
      continue;
    uint32_t nobits = SHT_NOBITS;
    std::memcpy(noStrings.data() + header.e_shoff + symtab.sh_link * sizeof(Elf64_Shdr) +
                    offsetof(Elf64_Shdr, sh_type),
                &nobits, sizeof nobits);
  }
  EXPECT_TRUE(test::has(loadError(noStrings, k.entrySymbol()), "unexpected symbol table"));
}

TEST(ObjectLoader, DamagedObjectsAreRefusedOrLoadedNeverACrash) {
  // Before: a kernel's object with one to four bytes changed, at random
  // places and with random values (the persistent cache checks a digest
  // before loading, so this is the loader's own guard). Expected: every
  // one is loaded or refused with an Error; none crashes or throws
  // anything else. The loaded code is not run.
  Kernel k = compile(library::layerNorm(), test::targetOptions());
  const std::string &object = k.object();
  std::mt19937_64 random(7);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string damaged = object;
    for (int n = 1 + static_cast<int>(random() % 4); n > 0; --n)
      damaged[random() % damaged.size()] = static_cast<char>(random());
    try {
      loadObject(damaged, k.entrySymbol());
    } catch (const Error &) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

} // namespace
} // namespace lanejit::jit
