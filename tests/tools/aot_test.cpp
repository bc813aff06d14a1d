// AOT: each library kernel's object, as the JIT linked it, linked by the
// system C compiler into a small C program with no LLVM, run on the
// fixtures; its outputs must match the FP64 oracle and Kernel::run's output
// bit for bit, the quantizing entries' int8 buffers included. Then
// `lanejit aot` as a user runs it.
#include <lanejit/aot.h>
#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include "support/testing.h"

#include "support/command_line.h"
#include "support/entry_args.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

// Reads raw buffers of any element type, calls the entry over row blocks
// with the workspace the header asks for, writes outputs.
// Usage: driver ROWS COLS BLOCK then per buffer: in|out PATH STRIDE BYTES;
// or driver ws C... to print the header's workspace floats for each C.
// BLOCK = -T instead runs T threads, as the header says to parallelise:
// each a contiguous row range, its own copy of the args and own workspace.
const char *kDriver = R"(#include "kernel.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct range {
  lanejit_launch_args args;
  int64_t begin, end;
};
static void *run_range(void *p) {
  struct range *r = p;
  LANEJIT_ENTRY(&r->args, r->begin, r->end);
  return NULL;
}

int main(int argc, char **argv) {
  if (strcmp(argv[1], "ws") == 0) {
    for (int i = 2; i < argc; ++i)
      printf("%lld\n", (long long)LANEJIT_WORKSPACE_FLOATS(atoll(argv[i])));
    return 0;
  }
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
    size_t bytes = (size_t)atoll(a[3]);
    buffers[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    strides[i] = atoll(a[2]);
    if (strcmp(a[0], "in") == 0) {
      FILE *f = fopen(a[1], "rb");
      if (!f || fread(buffers[i], 1, bytes, f) != bytes)
        return 3;
      fclose(f);
    } else {
      memset(buffers[i], 0xff, bytes); /* NaN in f32, bf16 and f16 */
    }
  }
  /* Exactly the floats the header asks for, then a sentinel that shows an
     undersized count. */
  int64_t ws_floats = LANEJIT_WORKSPACE_FLOATS(cols);
  unsigned char *ws = aligned_alloc(64, (size_t)(ws_floats + 16) * sizeof(float));
  memset(ws + ws_floats * sizeof(float), 0xab, 16 * sizeof(float));
  lanejit_launch_args args = {buffers, strides, rows, cols, ws_floats ? (float *)ws : NULL};
  if (block < 0) {
    struct range ranges[8];
    pthread_t threads[8];
    int t = (int)-block;
    for (int i = 0; i < t; ++i) {
      ranges[i].args = args;
      if (i > 0 && ws_floats)
        ranges[i].args.workspace = aligned_alloc(64, (size_t)ws_floats * sizeof(float));
      ranges[i].begin = rows * i / t;
      ranges[i].end = rows * (i + 1) / t;
      if (pthread_create(&threads[i], NULL, run_range, &ranges[i]) != 0)
        return 6;
    }
    for (int i = 0; i < t; ++i)
      pthread_join(threads[i], NULL);
  }
  for (int64_t r = 0; block > 0 && r < rows; r += block)
    LANEJIT_ENTRY(&args, r, r + block < rows ? r + block : rows);
  for (size_t i = 0; i < 16 * sizeof(float); ++i)
    if (ws[ws_floats * sizeof(float) + i] != 0xab)
      return 5;
  for (int i = 0; i < n; ++i) {
    char **a = argv + 4 + 4 * i;
    if (strcmp(a[0], "out") != 0)
      continue;
    FILE *f = fopen(a[1], "wb");
    size_t bytes = (size_t)atoll(a[3]);
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
    std::string command = "cc -O2 -std=c11 -Wall -Werror -DLANEJIT_ENTRY=" + a.entry_symbol +
                          " -DLANEJIT_BUFFERS=" + std::to_string(bufferCount(a)) +
                          " -DLANEJIT_WORKSPACE_FLOATS=" + workspaceFunction(a) + " -I'" + base +
                          "' -pthread '" + base + "driver.c' '" + base + "kernel.o' -o '" + base +
                          "driver' 2>'" + base + "cc.log'";
    EXPECT_EQ(shell(command), 0) << command << "\n" << slurp(base + "cc.log");
    return base + "driver";
  }

  static int bufferCount(const aot::Artifacts &a) {
    // The header's own count, so a wrong count there fails the link's check.
    size_t at = a.header.find("_BUFFERS ");
    return at == std::string::npos ? -1 : std::atoi(a.header.c_str() + at + 9);
  }

  static std::string workspaceFunction(const aot::Artifacts &a) {
    // The header's own function, so the driver sizes the workspace by it.
    std::string prefix = "static inline int64_t ";
    size_t at = a.header.find(prefix);
    if (at == std::string::npos)
      return "missing_workspace_function";
    at += prefix.size();
    return a.header.substr(at, a.header.find('(', at) - at);
  }

  // Runs `driver` (linked from `kernel`'s artifacts) on a 17x66 case with
  // padded strides; its outputs must be Kernel::run's bit for bit, in each
  // buffer's own element type.
  // threads > 0: the driver splits the rows over that many threads.
  void expectDriverMatchesJit(const Kernel &kernel, const std::string &driver,
                              const std::string &name, int threads = 0) {
    // 17x66 with padded row strides: tails, odd halves, strides all exercised.
    check::Case jit = check::makeCase(kernel.program(), {17, 66}, check::Fill::Fixture, 1, 3);
    check::Case native = jit;
    kernel.run(jit.inputRefs(), jit.outputRefs());
    std::string args =
        "17 66 " + std::to_string(threads > 0 ? -threads : kernel.options().block_rows);
    for (size_t i = 0; i < native.inputs.size(); ++i) {
      const check::GuardedBuffer &b = native.inputs[i];
      std::string file = path(name + "/in" + std::to_string(i));
      spit(file, b.raw(), static_cast<size_t>(b.bytes()));
      args += " in '" + file + "' " + std::to_string(b.rowStride()) + " " +
              std::to_string(b.bytes());
    }
    for (size_t i = 0; i < native.outputs.size(); ++i) {
      const check::GuardedBuffer &b = native.outputs[i];
      args += " out '" + path(name + "/out" + std::to_string(i)) + "' " +
              std::to_string(b.rowStride()) + " " + std::to_string(b.bytes());
    }
    ASSERT_EQ(shell("'" + driver + "' " + args), 0) << driver << " " << args;
    for (size_t i = 0; i < native.outputs.size(); ++i) {
      check::GuardedBuffer &b = native.outputs[i];
      std::string bytes = slurp(path(name + "/out" + std::to_string(i)));
      ASSERT_EQ(bytes.size(), static_cast<size_t>(b.bytes()));
      const auto size = static_cast<size_t>(bytesOf(b.type()));
      auto row = [&](const check::GuardedBuffer &buffer, int64_t r) {
        return static_cast<char *>(buffer.raw()) + r * buffer.rowStride() * size;
      };
      // Row padding keeps each side's fill: compare the columns only.
      for (int64_t r = 0; r < b.rows(); ++r)
        std::memcpy(row(b, r), bytes.data() + r * b.rowStride() * size, b.cols() * size);
      for (int64_t r = 0; r < b.rows(); ++r)
        EXPECT_EQ(std::memcmp(row(b, r), row(jit.outputs[i], r), b.cols() * size), 0)
            << "row " << r << " differs from Kernel::run";
    }
    EXPECT_TRUE(test::matchesReference(native));
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
    expectDriverMatchesJit(kernel, driver, e.name);
  }
}

TEST_F(Aot, QuantizingKernelsWriteInt8BuffersFromCAsTheJitDoes) {
  // The entries with an i8 output (q) beside an f32 one (scale), one of
  // them in bf16, and a program that reads an i8 input: every buffer at
  // its own element size, which the header describes as int8_t.
  std::vector<Program> programs = {library::quantizeQ8(), library::rmsNormQ8()};
  programs.push_back(withStorage(library::rmsNormQ8(), DType::BF16));
  programs.back().name = "rmsnorm_q8_bf16";
  programs.push_back(parse("program dequantize {\n  in q: i8[R, C]\n  in s: f32[R, 1]\n"
                           "  out y: f32[R, C]\n  %0 = load q[0:C]\n  %1 = load s[0:1]\n"
                           "  %2 = reduce.max %1\n  %3 = mul %0, %2\n  y[0:C] = %3\n}\n"));
  for (const Program &program : programs) {
    SCOPED_TRACE(program.name);
    Kernel kernel = compile(program);
    aot::Artifacts a = aot::build(kernel);
    EXPECT_NE(a.header.find("i8: int8_t"), std::string::npos) << a.header;
    EXPECT_TRUE(std::regex_search(a.header, std::regex(R"(\] q +(in|out)put +i8 +row tensor)")))
        << a.header;
    std::string driver = link(a, program.name);
    expectDriverMatchesJit(kernel, driver, program.name);
    fs::create_directories(dir_ / (program.name + "_threads"));
    expectDriverMatchesJit(kernel, driver, program.name + "_threads", 2);
  }
}

TEST_F(Aot, KernelsThatNeedAWorkspaceRunFromCAsTheHeaderSaysToCallThem) {
  // Unfused, values go through the workspace; before the header carried the
  // workspace field, such an entry read its pointer from past the caller's
  // struct. Unproved in-place pairs add a staging slot per guarded input.
  CompileOptions unfused;
  unfused.fuse_pointwise = false;
  unfused.fuse_reductions = false;
  CompileOptions guarded;
  guarded.prove_in_place = false;
  std::vector<std::pair<std::string, CompileOptions>> variants = {{"unfused", unfused},
                                                                  {"guarded", guarded}};
  for (const library::Entry &e : library::all())
    for (const auto &[tag, options] : variants) {
      std::string name = e.name + "_" + tag;
      SCOPED_TRACE(name);
      Kernel kernel = compile(e.make(), options);
      aot::Artifacts a = aot::build(kernel);
      std::string driver = link(a, name);
      // The header's count is Kernel::workspaceFloats for every C.
      std::string expected, list;
      for (int64_t c : {0, 2, 16, 66, 130, 4098, 1 << 20}) {
        expected += std::to_string(kernel.workspaceFloats(c)) + "\n";
        list += " " + std::to_string(c);
      }
      ASSERT_EQ(shell("'" + driver + "' ws" + list + " >'" + path(name + "/ws") + "'"), 0);
      EXPECT_EQ(slurp(path(name + "/ws")), expected) << a.header;
      if (tag == "unfused") {
        EXPECT_GT(kernel.workspaceFloats(66), 0) << "the case must need a workspace";
      }
      expectDriverMatchesJit(kernel, driver, name);
    }
}

TEST_F(Aot, TwoCallerThreadsSplittingTheRowsAsTheHeaderSaysMatchTheJit) {
  // Unfused layernorm needs a workspace: each thread must bring its own.
  CompileOptions unfused;
  unfused.fuse_pointwise = unfused.fuse_reductions = false;
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    Kernel kernel = compile(e.make(), unfused);
    aot::Artifacts a = aot::build(kernel);
    EXPECT_NE(a.header.find("row ranges"), std::string::npos) << a.header;
    std::string driver = link(a, e.name + "_threads");
    expectDriverMatchesJit(kernel, driver, e.name + "_threads", 2);
  }
}

TEST_F(Aot, HeaderPinsTheLaunchArgsLayout) {
  // A caller with another layout of lanejit_launch_args (the old 4-field
  // one) does not compile against the header.
  aot::Artifacts a = aot::build(compile(library::rmsNorm()));
  fs::create_directories(dir_ / "pin");
  spit(path("pin/kernel.h"), a.header.data(), a.header.size());
  std::ofstream(path("pin/main.c"))
      << "#define LANEJIT_LAUNCH_ARGS_DEFINED\n#include <stdint.h>\n"
         "typedef struct lanejit_launch_args { void *const *buffers; const int64_t *row_strides;"
         " int64_t rows; int64_t cols; } lanejit_launch_args;\n"
         "#include \"kernel.h\"\nint main(void) { return 0; }\n";
  std::string cc = "cc -c -I'" + path("pin") + "' '" + path("pin/main.c") + "' -o '" +
                   path("pin/main.o") + "' >'" + path("pin/cc.log") + "' 2>&1";
  EXPECT_NE(shell(cc), 0);
  EXPECT_NE(slurp(path("pin/cc.log")).find("lanejit_launch_args layout"), std::string::npos)
      << slurp(path("pin/cc.log"));
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
  test::EntryArgs args(kernel, native);
  linked(&args.args, 0, 5);
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
  EXPECT_NE(a.header.find("float *workspace;"), std::string::npos) << a.header;
  EXPECT_NE(a.header.find("int64_t lanejit_rope_workspace_floats(int64_t C)"), std::string::npos)
      << a.header;
  EXPECT_TRUE(a.imports.empty());
}

TEST_F(Aot, CommandWritesAnObjectThatLinks) {
  std::string command = std::string("'") + LANEJIT_CLI_PATH + "' aot lib:swiglu -o '" +
                        path("k.o") + "' --header '" + path("kernel.h") + "' >'" + path("out") +
                        "' 2>&1";
  ASSERT_EQ(shell(command), 0) << slurp(path("out"));
  // The symbol's number is the compiling process's count, or another
  // process's when the persistent cache already holds the kernel.
  std::smatch entry;
  std::string written = slurp(path("out"));
  ASSERT_TRUE(
      std::regex_search(written, entry, std::regex("entry (lanejit_swiglu_[0-9]+), imports: none")))
      << written;
  std::string symbol = entry[1];
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
  EXPECT_NE(slurp(path("out")).find("function " + symbol + "\n"), std::string::npos)
      << slurp(path("out"));
  // How many dense loops depends on how LLVM unrolls for this CPU.
  EXPECT_TRUE(std::regex_search(slurp(path("out")),
                                std::regex("full-packet body: inlined: [1-9][0-9]* dense loop")))
      << slurp(path("out"));
}

// An aarch64 C compiler for the cross headers' syntax check, or "".
std::string aarch64Cc() {
  return shell("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") == 0 ? "aarch64-linux-gnu-gcc"
                                                                        : "";
}

TEST_F(Aot, CommandWritesAArch64ObjectsAndHeadersForEveryLibraryKernel) {
  std::string cc = aarch64Cc();
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    std::string object = path(e.name + ".o"), header = path(e.name + ".h");
    std::string command = std::string("'") + LANEJIT_CLI_PATH + "' aot lib:" + e.name +
                          " --target aarch64-linux-gnu --target-cpu apple-m1 -o '" + object +
                          "' --header '" + header + "' >'" + path("out") + "' 2>&1";
    ASSERT_EQ(shell(command), 0) << slurp(path("out"));
    EXPECT_NE(slurp(path("out")).find("imports: none"), std::string::npos) << slurp(path("out"));
    std::string bytes = slurp(object);
    // ELF64, little-endian, e_machine EM_AARCH64 (183).
    ASSERT_GT(bytes.size(), 20u);
    EXPECT_EQ(bytes.compare(0, 4, "\x7f" "ELF"), 0);
    EXPECT_EQ(static_cast<unsigned char>(bytes[18]), 183u);
    std::string text = slurp(header);
    EXPECT_NE(text.find("Compiled for CPU apple-m1"), std::string::npos) << text;
    EXPECT_NE(text.find("+neon"), std::string::npos) << text;
    if (cc.empty())
      continue;
    // Valid C for an AArch64 caller, the launch ABI's static asserts held
    // under AAPCS64's LP64 layout.
    // The entry's type and the workspace function as a caller uses them.
    std::ofstream(path("use.c"))
        << "#include \"" << header << "\"\n"
        << "int main(void) {\n  void (*entry)(const lanejit_launch_args *, int64_t, int64_t) = "
        << "lanejit_" << e.name << "_entry;\n  (void)entry;\n  return lanejit_" << e.name
        << "_workspace_floats(4096) < 0;\n}\n";
    std::string check = cc + " -std=c11 -Wall -Werror -fsyntax-only '" + path("use.c") + "' >'" +
                        path("cc.log") + "' 2>&1";
    EXPECT_EQ(shell(check), 0) << slurp(path("cc.log"));
  }
  if (cc.empty())
    GTEST_SKIP() << "aarch64-linux-gnu-gcc not installed: the headers' C syntax was not checked "
                    "(scripts/install-deps installs it)";
}

TEST_F(Aot, AArch64ObjectInspectsAsNeonWithNoScalarLoop) {
  std::string object = path("r.o");
  std::string command = std::string("'") + LANEJIT_CLI_PATH +
                        "' aot lib:rmsnorm --target aarch64-linux-gnu --target-cpu apple-m1 -o '" +
                        object + "' >'" + path("out") + "' 2>&1";
  ASSERT_EQ(shell(command), 0) << slurp(path("out"));
  std::string inspect = std::string("'") + LANEJIT_CLI_PATH + "' inspect '" + object +
                        "' --target-cpu apple-m1 >'" + path("out") + "' 2>&1";
  ASSERT_EQ(shell(inspect), 0) << slurp(path("out"));
  std::string out = slurp(path("out"));
  EXPECT_NE(out.find("object: elf64-littleaarch64"), std::string::npos) << out;
  EXPECT_NE(out.find("llvm-mca: cpu apple-m1"), std::string::npos) << out;
  EXPECT_TRUE(
      std::regex_search(out, std::regex("innermost: [1-9][0-9]* dense, 0 masked, 0 scalar")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("llvm-mca [0-9]+\\.[0-9]+ cycles/iteration")))
      << out;
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
