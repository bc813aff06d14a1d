// inspect on AArch64 objects: every library kernel cross-compiled for
// apple-m1 (NEON, 128-bit) read back: NEON vector instructions, calls only to
// the allowed imports, dense packet loops and no scalar (element at a time)
// loop anywhere, tails as straight-line per-lane code outside the loops,
// llvm-mca estimates for each innermost loop; and the control-flow loop
// finder on the layout that fools a backward-branch one.
#include <lanejit/aot.h>
#include <lanejit/error.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <unistd.h>

namespace lanejit {
namespace {

using inspect::FunctionReport;
using inspect::ObjectReport;

Kernel compileAArch64(const Program &p, const std::string &cpu = "apple-m1", int lanes = 0) {
  CompileOptions o;
  o.target_triple = "aarch64-linux-gnu";
  o.target_cpu = cpu;
  o.lanes = lanes;
  return compile(p, o);
}

const FunctionReport &only(const ObjectReport &r) {
  EXPECT_EQ(r.functions.size(), 1u) << inspect::toText(r);
  return r.functions.at(0);
}

TEST(InspectAArch64, EveryLibraryKernelIsNeonWithDenseLoopsAndNoScalarLoop) {
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    ObjectReport r = inspect::inspectKernel(compileAArch64(e.make()));
    EXPECT_EQ(r.arch, "aarch64");
    EXPECT_NE(r.format.find("aarch64"), std::string::npos) << r.format;
    const FunctionReport &f = only(r);
    std::string text = inspect::toText(r);
    // NEON: 128-bit q registers, vector arithmetic on vN.4s.
    EXPECT_EQ(f.vector_bits, 128) << text;
    EXPECT_GT(f.mix.vector, 0) << text;
    EXPECT_GT(f.loads.vector, 0) << text;
    EXPECT_GT(f.stores.vector + f.stores.masked, 0) << text;
    EXPECT_GT(f.stack_frame, 0) << "from .stack_sizes\n" << text;
    EXPECT_EQ(f.stack_source, "stack-sizes section");
    EXPECT_EQ(f.red_zone, 0) << "AAPCS64 has no red zone";
    // Full packets: dense loops; NEON has no masks, so no loop is masked.
    EXPECT_GE(f.dense_loops, 1) << text;
    EXPECT_EQ(f.masked_loops, 0) << text;
    // The property issue 31 asks inspect to show: no innermost loop moves
    // elements one at a time; every tail is per-lane code outside them.
    EXPECT_EQ(f.scalar_loops, 0) << text;
    EXPECT_GT(f.masked_outside_loops, 0) << "the tails are per-lane loads and stores\n" << text;
    EXPECT_NE(f.tail_body.find("single-lane memory op"), std::string::npos) << f.tail_body;
    int computing = 0; // innermost loops with NEON arithmetic (a fill loop has none)
    for (const inspect::Loop &l : f.loops)
      if (l.innermost) {
        EXPECT_EQ(l.loads.masked + l.stores.masked, 0) << "a tail inside a loop\n" << text;
        EXPECT_GT(l.mca_cycles, 0) << "llvm-mca estimates every innermost loop\n" << text;
        computing += l.mix.vector > 0;
      }
    EXPECT_GE(computing, 1) << text;
    for (const inspect::CallSite &c : f.calls)
      EXPECT_TRUE(c.target == "memset" || c.target == "memcpy" || c.target == "memmove")
          << e.name << " calls " << c.target;
    EXPECT_TRUE(inspect::disallowedImports(r).empty()) << text;
    EXPECT_EQ(r.mca_cpu, "apple-m1");
    EXPECT_EQ(r.mca_note, "") << text;
  }
}

TEST(InspectAArch64, OtherCpusAndLaneCountsKeepTheProperties) {
  for (const char *cpu : {"neoverse-v1", "cortex-a76"})
    for (int lanes : {4, 16}) {
      SCOPED_TRACE(std::string(cpu) + " " + std::to_string(lanes));
      for (const Program &p : {library::rmsNorm(), library::rope()}) {
        ObjectReport r = inspect::inspectKernel(compileAArch64(p, cpu, lanes));
        const FunctionReport &f = only(r);
        EXPECT_GE(f.dense_loops, 1) << inspect::toText(r);
        EXPECT_EQ(f.masked_loops + f.scalar_loops, 0) << inspect::toText(r);
        EXPECT_EQ(r.mca_cpu, cpu);
      }
    }
}

TEST(InspectAArch64, MixCountsFusedMultiplyAdds) {
  // RoPE's rotation, x*cos - y*sin, contracts to fmla/fmls on NEON.
  ObjectReport r = inspect::inspectKernel(compileAArch64(library::rope()));
  const FunctionReport &f = only(r);
  EXPECT_GT(f.mix.fma, 0) << inspect::disassemble(compileAArch64(library::rope()).object());
  EXPECT_LE(f.mix.vector + f.mix.scalar_fp, f.mix.total);
  EXPECT_GT(f.mix.branch, 0);
}

TEST(InspectAArch64, LaneBlocksThatBranchBackAreNotLoops) {
  // LLVM lays a scalarised masked load's lane blocks out after the row
  // loop's body; they branch back to the next lane's test. A loop finder
  // that took every backward branch for a loop saw a masked "loop" there.
  ObjectReport r = inspect::inspectKernel(compileAArch64(library::rmsNorm()));
  const FunctionReport &f = only(r);
  std::string listing = inspect::disassemble(compileAArch64(library::rmsNorm()).object());
  ASSERT_NE(listing.find("ld1 { v"), std::string::npos) << "per-lane loads\n" << listing;
  // "tbz w4, #1, #-1092": a lane test branching back.
  EXPECT_TRUE(std::regex_search(listing, std::regex("tbn?z w[0-9]+, #[0-9]+, #-")))
      << "the layout this test is about\n" << listing;
  for (const inspect::Loop &l : f.loops)
    EXPECT_EQ(l.innermost && l.loads.masked + l.stores.masked > 0, false)
        << inspect::toText(r);
  EXPECT_LE(f.loops.size(), 6u) << inspect::toText(r);
}

TEST(InspectAArch64, McaEstimatesFollowTheCpuAndCanBeTurnedOff) {
  Kernel k = compileAArch64(library::rmsNorm());
  inspect::McaTarget off;
  off.enabled = false;
  ObjectReport none = inspect::inspectObject(k.object(), {}, off);
  EXPECT_EQ(none.mca_cpu, "");
  for (const inspect::Loop &l : only(none).loops)
    EXPECT_EQ(l.mca_cycles, 0);
  // Without a CPU: the architecture's generic model, named as such.
  ObjectReport generic = inspect::inspectObject(k.object(), {}, inspect::McaTarget{});
  EXPECT_EQ(generic.mca_cpu, "generic");
  // An unknown CPU costs the estimates, not the report.
  inspect::McaTarget bogus;
  bogus.cpu = "no-such-cpu";
  ObjectReport unknown = inspect::inspectObject(k.object(), {}, bogus);
  EXPECT_EQ(unknown.mca_cpu, "");
  EXPECT_NE(unknown.mca_note.find("no-such-cpu"), std::string::npos) << unknown.mca_note;
  EXPECT_EQ(unknown.functions.size(), 1u);
  std::string json = inspect::toJson(inspect::inspectKernel(k));
  EXPECT_NE(json.find("\"arch\": \"aarch64\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"mca_cycles\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"scalar_loops\": 0"), std::string::npos) << json;
}

TEST(InspectAArch64, X86KernelsGetEstimatesToo) {
  CompileOptions o;
  o.target_cpu = "x86-64-v4";
  ObjectReport r = inspect::inspectKernel(compile(library::rmsNorm(), o));
  EXPECT_EQ(r.arch, "x86-64");
  EXPECT_EQ(r.mca_cpu, "x86-64-v4");
  int estimated = 0;
  for (const inspect::Loop &l : only(r).loops)
    estimated += l.innermost && l.mca_cycles > 0;
  EXPECT_GE(estimated, 1) << inspect::toText(r);
  EXPECT_EQ(only(r).scalar_loops, 0) << inspect::toText(r);
}

TEST(InspectAArch64, AotBuildsEveryLibraryKernel) {
  for (const library::Entry &e : library::all()) {
    SCOPED_TRACE(e.name);
    Kernel k = compileAArch64(e.make());
    aot::Artifacts a = aot::build(k);
    EXPECT_EQ(a.object, k.object());
    EXPECT_TRUE(a.imports.empty() || inspect::disallowedImports(inspect::inspectObject(a.object))
                                         .empty());
    EXPECT_NE(a.header.find("Compiled for CPU apple-m1"), std::string::npos) << a.header;
  }
}

TEST(InspectAArch64, CrossCompiledSharedObjectNamesPltCallsAndReadsThePrologue) {
  if (std::system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "aarch64-linux-gnu-gcc not installed (scripts/install-deps installs it)";
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("lanejit_inspect_a64_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.c") << "float expf(float);\n"
                                "void kernel(float *y, const float *x, int n) {\n"
                                "  for (int i = 0; i < n; ++i) y[i] = expf(x[i]) + 1.0f;\n}\n";
  std::string so = (dir / "k.so").string();
  ASSERT_EQ(std::system(("aarch64-linux-gnu-gcc -O2 -shared -fPIC '" + (dir / "k.c").string() +
                         "' -o '" + so + "'")
                            .c_str()),
            0);
  std::ifstream in(so, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  inspect::McaTarget cpu;
  cpu.cpu = "neoverse-n1";
  ObjectReport r = inspect::inspectObject(bytes, {"kernel"}, cpu);
  const FunctionReport &f = only(r);
  EXPECT_EQ(r.kind, "shared object");
  // Through the PLT: adrp x16 / ldr x17 / br x17, the slot's relocation.
  ASSERT_EQ(f.calls.size(), 1u) << inspect::toText(r);
  EXPECT_EQ(f.calls[0].target, "expf") << inspect::toText(r);
  // "stp x29, x30, [sp, #-N]!" and friends: g++ writes no .stack_sizes.
  EXPECT_EQ(f.stack_source, "prologue");
  EXPECT_GT(f.stack_frame, 0) << inspect::toText(r);
  // One element per iteration around a call: a scalar loop, and no
  // estimate (llvm-mca cannot model calls), said so.
  EXPECT_EQ(f.scalar_loops, 1) << inspect::toText(r);
  EXPECT_NE(r.mca_note.find("calls a function"), std::string::npos) << r.mca_note;
}

} // namespace
} // namespace lanejit
