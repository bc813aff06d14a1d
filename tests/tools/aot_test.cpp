// AOT: each library kernel's object, as the JIT linked it, linked by the
// system C compiler into a small C program with no LLVM, run on the
// fixtures; its outputs must match the FP64 oracle and Kernel::run's output
// bit for bit. Then `lanejit aot` as a user runs it.
#include <lanejit/aot.h>
#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include "support/testing.h"

#include "support/command_line.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

// Reads raw f32 buffers, calls the entry over row blocks, writes outputs.
// Usage: driver ROWS COLS BLOCK then per buffer: in|out PATH STRIDE ELEMENTS.
const char *kDriver = R"(#include "kernel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int64_t rows = atoll(argv[1]), cols = atoll(argv[2]), block = atoll(argv[3]);
  int n = (argc - 4) / 4;
  void *buffers[64];
  int64_t strides[64];
  if (n != LANEJIT_BUFFERS || (argc - 4) % 4 != 0) {
    fprintf(stderr, "expected %d buffers\n", LANEJIT_BUFFERS);
    return 2;
  }
  for (int i = 0; i < n; ++i) {
    char **a = argv + 4 + 4 * i;
    size_t bytes = (size_t)atoll(a[3]) * sizeof(float);
    buffers[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    strides[i] = atoll(a[2]);
    if (strcmp(a[0], "in") == 0) {
      FILE *f = fopen(a[1], "rb");
      if (!f || fread(buffers[i], 1, bytes, f) != bytes)
        return 3;
      fclose(f);
    } else {
      memset(buffers[i], 0xff, bytes); /* NaN */
    }
  }
  lanejit_launch_args args = {buffers, strides, rows, cols};
  for (int64_t r = 0; r < rows; r += block)
    LANEJIT_ENTRY(&args, r, r + block < rows ? r + block : rows);
  for (int i = 0; i < n; ++i) {
    char **a = argv + 4 + 4 * i;
    if (strcmp(a[0], "out") != 0)
      continue;
    FILE *f = fopen(a[1], "wb");
    size_t bytes = (size_t)atoll(a[3]) * sizeof(float);
    if (!f || fwrite(buffers[i], 1, bytes, f) != bytes)
      return 4;
    fclose(f);
  }
  return 0;
}
)";

using test::shell;
using test::slurp;

void spit(const fs::path &path, const void *data, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
}

class Aot : public ::testing::Test {
protected:
  std::string path(const std::string &name) const { return scratch_.file(name); }

  // Links `a` into the driver; returns the executable's path.
  std::string link(const aot::Artifacts &a, const std::string &name) {
    fs::create_directories(dir_ / name);
    std::string base = path(name) + "/";
    spit(base + "kernel.o", a.object.data(), a.object.size());
    spit(base + "kernel.h", a.header.data(), a.header.size());
    spit(base + "driver.c", kDriver, std::strlen(kDriver));
    std::string command = "cc -O2 -std=c11 -DLANEJIT_ENTRY=" + a.entry_symbol +
                          " -DLANEJIT_BUFFERS=" + std::to_string(bufferCount(a)) + " -I'" + base +
                          "' '" + base + "driver.c' '" + base + "kernel.o' -o '" + base +
                          "driver' 2>'" + base + "cc.log'";
    EXPECT_EQ(shell(command), 0) << command << "\n" << slurp(base + "cc.log");
    return base + "driver";
  }

  static int bufferCount(const aot::Artifacts &a) {
    // The header's own count, so a wrong count there fails the link's check.
    size_t at = a.header.find("_BUFFERS ");
    return at == std::string::npos ? -1 : std::atoi(a.header.c_str() + at + 9);
  }

  test::ScratchDir scratch_{"lanejit_aot_test"};
  const fs::path &dir_ = scratch_.path();
};

TEST_F(Aot, LibraryKernelsLinkedWithoutLlvmMatchTheJitBitForBit) {
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    CompileOptions o; // the defaults: widest lanes, specialization on
    Kernel kernel = compile(e.make(), o);
    aot::Artifacts a = aot::build(kernel);
    EXPECT_EQ(a.object, kernel.object()) << "the JIT's own object";
    std::string driver = link(a, e.name);

    // 17x66 with padded row strides: tails, odd halves, strides all exercised.
    check::Case jit = check::makeCase(e.make(), {17, 66}, check::Fill::Fixture, 1, 3);
    check::Case native = jit;
    kernel.run(jit.inputRefs(), jit.outputRefs());
    std::string args = "17 66 " + std::to_string(o.block_rows);
    for (size_t i = 0; i < native.inputs.size(); ++i) {
      const check::GuardedBuffer &b = native.inputs[i];
      std::string file = path(e.name + "/in" + std::to_string(i));
      spit(file, b.data(), b.elements() * sizeof(float));
      args += " in '" + file + "' " + std::to_string(b.rowStride()) + " " +
              std::to_string(b.elements());
    }
    for (size_t i = 0; i < native.outputs.size(); ++i) {
      const check::GuardedBuffer &b = native.outputs[i];
      args += " out '" + path(e.name + "/out" + std::to_string(i)) + "' " +
              std::to_string(b.rowStride()) + " " + std::to_string(b.elements());
    }
    ASSERT_EQ(shell("'" + driver + "' " + args), 0) << driver << " " << args;
    for (size_t i = 0; i < native.outputs.size(); ++i) {
      check::GuardedBuffer &b = native.outputs[i];
      std::string bytes = slurp(path(e.name + "/out" + std::to_string(i)));
      ASSERT_EQ(bytes.size(), b.elements() * sizeof(float));
      // Row padding stays NaN in both: compare the columns only.
      for (int64_t r = 0; r < b.rows(); ++r)
        std::memcpy(&b.at(r, 0), bytes.data() + r * b.rowStride() * sizeof(float),
                    b.cols() * sizeof(float));
      for (int64_t r = 0; r < b.rows(); ++r)
        EXPECT_EQ(std::memcmp(&b.at(r, 0), &jit.outputs[i].at(r, 0), b.cols() * sizeof(float)), 0)
            << "row " << r << " differs from Kernel::run";
    }
    EXPECT_TRUE(test::matchesReference(native));
  }
}

TEST_F(Aot, SharedLinkedEntryMatchesTheJit) {
  // What the benchmark times as its AOT variant.
  Kernel kernel = compile(library::layerNorm());
  NativeEntry linked = aot::linkShared(aot::build(kernel), path("so"));
  ASSERT_NE(linked, nullptr);
  EXPECT_NE(linked, kernel.nativeEntry());
  check::Case jit = check::makeCase(library::layerNorm(), {5, 97}, check::Fill::Random);
  check::Case native = jit;
  kernel.run(jit.inputRefs(), jit.outputRefs());
  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  for (check::Case *c : {&native})
    for (auto *list : {&c->inputs, &c->outputs})
      for (check::GuardedBuffer &b : *list) {
        buffers.push_back(b.data());
        strides.push_back(b.rowStride());
      }
  LaunchArgs args{buffers.data(), strides.data(), 5, 97};
  linked(&args, 0, 5);
  EXPECT_EQ(native.outputs[0].hash(), jit.outputs[0].hash());
  EXPECT_TRUE(test::matchesReference(native));
}

TEST_F(Aot, HeaderDeclaresTheEntryAndItsBuffers) {
  aot::Artifacts a = aot::build(compile(library::rope()));
  EXPECT_NE(a.header.find("void " + a.entry_symbol + "(const lanejit_launch_args *args"),
            std::string::npos)
      << a.header;
  EXPECT_NE(a.header.find("#define lanejit_rope_entry " + a.entry_symbol), std::string::npos);
  EXPECT_NE(a.header.find("#define LANEJIT_ROPE_BUFFERS 4"), std::string::npos) << a.header;
  EXPECT_NE(a.header.find("[1] cos"), std::string::npos) << a.header;
  EXPECT_NE(a.header.find("[rows, C/2]"), std::string::npos) << a.header;
  EXPECT_TRUE(a.imports.empty());
}

TEST_F(Aot, CommandWritesAnObjectThatLinks) {
  std::string command = std::string("'") + LANEJIT_CLI_PATH + "' aot lib:swiglu -o '" +
                        path("k.o") + "' --header '" + path("kernel.h") + "' >'" + path("out") +
                        "' 2>&1";
  ASSERT_EQ(shell(command), 0) << slurp(path("out"));
  EXPECT_NE(slurp(path("out")).find("entry lanejit_swiglu_0, imports: none"), std::string::npos)
      << slurp(path("out"));
  std::ofstream(path("main.c")) << "#include \"kernel.h\"\nint main(void) { return "
                                   "lanejit_swiglu_entry != 0 ? 0 : 1; }\n";
  std::string cc = "cc -I'" + dir_.string() + "' '" + path("main.c") + "' '" + path("k.o") +
                   "' -o '" + path("main") + "' >'" + path("cc.log") + "' 2>&1";
  ASSERT_EQ(shell(cc), 0) << slurp(path("cc.log"));
  EXPECT_EQ(shell("'" + path("main") + "'"), 0);

  // The written object inspects like the kernel it came from.
  std::string inspect = std::string("'") + LANEJIT_CLI_PATH + "' inspect '" + path("k.o") + "' >'" +
                        path("out") + "' 2>&1";
  ASSERT_EQ(shell(inspect), 0) << slurp(path("out"));
  EXPECT_NE(slurp(path("out")).find("function lanejit_swiglu_0\n"), std::string::npos)
      << slurp(path("out"));
  EXPECT_NE(slurp(path("out")).find("full-packet body: inlined: 1 dense loop"), std::string::npos)
      << slurp(path("out"));
}

TEST_F(Aot, CommandErrorsAreOneLine) {
  std::ofstream(path("bad.lj")) << "program broken(\n";
  for (const std::string &args :
       {"aot lib:nosuch -o '" + path("k.o") + "'",
        "aot '" + path("bad.lj") + "' -o '" + path("k.o") + "'", std::string("aot lib:rope"),
        "aot lib:rope -o '" + path("no/such/dir/k.o") + "'"}) {
    std::string command = std::string("'") + LANEJIT_CLI_PATH + "' " + args + " >'" + path("out") +
                          "' 2>'" + path("err") + "'";
    EXPECT_EQ(shell(command), 1) << args;
    std::string err = slurp(path("err"));
    EXPECT_EQ(err.rfind("lanejit: error: ", 0), 0u) << args << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << ": " << err;
  }
  EXPECT_FALSE(fs::exists(path("k.o"))) << "nothing written on error";
}

TEST_F(Aot, CommandChecksEveryOutputBeforeWritingAny) {
  // The object is written first: a command that wrote as it went would
  // replace k.o before finding the header's path bad.
  const std::string previous = "previous contents";
  std::ofstream(path("k.o")) << previous;
  const std::string program = print(library::rope());
  std::ofstream(path("p.lj")) << program;
  fs::create_directories(path("dir"));
  const std::pair<std::string, std::string> cases[] = {
      {"lib:rope -o '" + path("k.o") + "' --header '" + path("no/such/dir/k.h") + "'",
       "/no/such/dir does not exist"},
      {"lib:rope -o '" + path("k.o") + "' --header '" + path("dir") + "'", "dir: is a directory"},
      {"lib:rope -o '" + path("k.o") + "' --header '" + path("k.o") + "'",
       "k.o: named twice as an output"},
      {"lib:rope -o '" + path("k.o") + "' --header /dev/full", "/dev/full: is not a regular file"},
      {"'" + path("p.lj") + "' -o '" + path("k.o") + "' --header '" + path("p.lj") + "'",
       "p.lj: is also an input"}};
  for (const auto &[args, phrase] : cases) {
    std::string command = std::string("'") + LANEJIT_CLI_PATH + "' aot " + args + " >'" +
                          path("out") + "' 2>'" + path("err") + "'";
    EXPECT_EQ(shell(command), 1) << args;
    std::string err = slurp(path("err"));
    EXPECT_EQ(err.rfind("lanejit: error: ", 0), 0u) << args << ": " << err;
    EXPECT_NE(err.find(phrase), std::string::npos) << args << ": " << err;
    EXPECT_EQ(slurp(path("k.o")), previous) << args;
  }
  EXPECT_EQ(slurp(path("p.lj")), program);
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  for (const fs::directory_entry &e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

} // namespace
} // namespace lanejit
