// Code metrics read from real objects: the kernels' own (spec on/off, both
// mask encodings), a C object built here with known helpers, calls and a
// frame, and objects that are not objects.
#include <lanejit/aot.h>
#include <lanejit/error.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace lanejit {
namespace {

namespace fs = std::filesystem;
using inspect::FunctionReport;
using inspect::ObjectReport;

// Machine code is read from kernels compiled for named CPUs, never the
// host's: LLVM tunes (unrolls, schedules) for the CPU, so the host would make
// the shape depend on the machine the tests run on. Exact counts are for the
// one pinned CPU; the properties are checked on several, Intel and AMD.
const char *kPinnedAvx512 = "x86-64-v4";
const char *const kAvx512Cpus[] = {"x86-64-v4", "skylake-avx512", "icelake-server",
                                   "sapphirerapids", "znver4"};
const char *const kAvx2Cpus[] = {"x86-64-v3", "haswell", "alderlake", "znver2", "znver3"};

Kernel compileRope(bool spec, const std::string &cpu = kPinnedAvx512, int lanes = 16) {
  CompileOptions o;
  o.lanes = lanes;
  o.specialize_full_packets = spec;
  o.target_cpu = cpu;
  return compile(library::rope(), o);
}

const FunctionReport &only(const ObjectReport &r) {
  EXPECT_EQ(r.functions.size(), 1u) << inspect::toText(r);
  return r.functions.at(0);
}

// RoPE reads x[:h], x[h:], cos, sin and writes y[:h], y[h:] per packet: in
// any loop LLVM unrolls k times, 4k loads and 2k stores.
void expectTwoLoadsPerStore(const inspect::Loop &l, int64_t loads, int64_t stores,
                            const ObjectReport &r) {
  EXPECT_GT(stores, 0) << inspect::toText(r);
  EXPECT_EQ(stores % 2, 0) << inspect::toText(r);
  EXPECT_EQ(loads, 2 * stores) << inspect::toText(r);
  // rbp is a plain base register here (no frame pointer): nothing counts as stack.
  EXPECT_EQ(l.loads.stack + l.stores.stack, 0) << inspect::toText(r);
}

// Every masked access outside the loops, in whole tails of 4 loads, 2 stores.
void expectMaskedTailsOnly(const FunctionReport &f, const ObjectReport &r) {
  EXPECT_GT(f.stores.masked, 0) << inspect::toText(r);
  EXPECT_EQ(f.stores.masked % 2, 0) << inspect::toText(r);
  EXPECT_EQ(f.loads.masked, 2 * f.stores.masked) << inspect::toText(r);
  EXPECT_EQ(f.masked_outside_loops, f.loads.masked + f.stores.masked) << inspect::toText(r);
}

TEST(Inspect, SpecializedRopeHasADenseLoopAndAMaskedTail) {
  for (const char *cpu : kAvx512Cpus) {
    SCOPED_TRACE(cpu);
    Kernel k = compileRope(true, cpu);
    ObjectReport r = inspect::inspectKernel(k);
    const FunctionReport &f = only(r);
    EXPECT_EQ(f.name, k.entrySymbol());
    EXPECT_GT(f.bytes, 0u);
    EXPECT_GT(f.instructions, 0);
    EXPECT_EQ(f.stack_source, "stack-sizes section");
    EXPECT_GE(f.stack_frame, 0);
    EXPECT_TRUE(f.calls.empty()) << inspect::toText(r);
    EXPECT_TRUE(r.undefined.empty());
    EXPECT_GE(f.dense_loops, 1) << inspect::toText(r);
    EXPECT_EQ(f.masked_loops, 0) << inspect::toText(r);
    // The tail, outside every loop (LLVM may copy it, e.g. per
    // loop version): four inputs read masked per two halves written.
    expectMaskedTailsOnly(f, r);
    int packet_loops = 0;
    for (const inspect::Loop &l : f.loops)
      if (l.innermost && l.loads.vector > 0) {
        ++packet_loops;
        EXPECT_EQ(l.loads.masked + l.stores.masked, 0) << "the full-packet loop is unmasked";
        expectTwoLoadsPerStore(l, l.loads.vector, l.stores.vector, r);
      }
    EXPECT_GE(packet_loops, 1) << inspect::toText(r);
    EXPECT_NE(f.full_packet_body.find("dense loop"), std::string::npos) << f.full_packet_body;
    EXPECT_NE(f.tail_body.find("masked"), std::string::npos) << f.tail_body;
  }
}

TEST(Inspect, PinnedRopeHasItsExactShape) {
  // The pinned CPU's exact code: one dense loop over one packet per
  // iteration (4 loads, 2 stores: lanejit marks its loops
  // llvm.loop.unroll.disable), one masked tail. With llvm_loop_unroll on,
  // LLVM unrolls it twice for x86-64-v4 (8 loads, 4 stores). The same on
  // every machine.
  for (bool unroll : {false, true}) {
    SCOPED_TRACE(unroll ? "llvm_loop_unroll on" : "default");
    CompileOptions o;
    o.lanes = 16;
    o.target_cpu = kPinnedAvx512;
    o.llvm_loop_unroll = unroll;
    // The lean pipeline (the default) has no unroller: the switch acts
    // under LLVM's O2 pipeline only.
    o.lean_llvm_pipeline = !unroll;
    ObjectReport r = inspect::inspectKernel(compile(library::rope(), o));
    const FunctionReport &f = only(r);
    EXPECT_EQ(f.dense_loops, 1) << inspect::toText(r);
    EXPECT_EQ(f.loads.masked, 4) << inspect::toText(r);
    EXPECT_EQ(f.stores.masked, 2) << inspect::toText(r);
    int packet_loops = 0;
    for (const inspect::Loop &l : f.loops)
      if (l.innermost && l.loads.vector > 0) {
        ++packet_loops;
        EXPECT_EQ(l.loads.vector, unroll ? 8 : 4) << inspect::toText(r);
        EXPECT_EQ(l.stores.vector, unroll ? 4 : 2) << inspect::toText(r);
      }
    EXPECT_EQ(packet_loops, 1) << inspect::toText(r);
  }
}

TEST(Inspect, UnspecializedRopeMasksItsPacketLoop) {
  for (const char *cpu : kAvx512Cpus) {
    SCOPED_TRACE(cpu);
    ObjectReport r = inspect::inspectKernel(compileRope(false, cpu));
    const FunctionReport &f = only(r);
    EXPECT_EQ(f.dense_loops, 0) << inspect::toText(r);
    EXPECT_GE(f.masked_loops, 1) << inspect::toText(r);
    // Both the packet loop and the tail read the four inputs masked; the
    // lane iota the masks compare against comes from the constant pool.
    EXPECT_EQ(f.loads.vector, 0) << inspect::toText(r);
    EXPECT_GE(f.loads.masked, 8) << inspect::toText(r);
    EXPECT_EQ(f.loads.masked, 2 * f.stores.masked) << inspect::toText(r);
    EXPECT_GE(f.masked_outside_loops, 6) << "the tail" << inspect::toText(r);
    for (const inspect::Loop &l : f.loops)
      if (l.innermost && l.loads.masked > 0)
        expectTwoLoadsPerStore(l, l.loads.masked, l.stores.masked, r);
    EXPECT_GE(f.loads.constant, 1) << inspect::toText(r);
    EXPECT_NE(f.full_packet_body.find("masked"), std::string::npos) << f.full_packet_body;
  }
}

TEST(Inspect, Avx2MasksAreVmaskmov) {
  // Without AVX-512 there are no k-registers: masking is vmaskmovps.
  for (const char *cpu : kAvx2Cpus) {
    SCOPED_TRACE(cpu);
    Kernel on = compileRope(true, cpu, 8);
    ObjectReport r = inspect::inspectKernel(on);
    std::string listing = inspect::disassemble(on.object());
    ASSERT_NE(listing.find("vmaskmovps"), std::string::npos) << listing;
    EXPECT_EQ(listing.find("{k"), std::string::npos) << listing;
    EXPECT_EQ(listing.find("zmm"), std::string::npos) << listing;
    EXPECT_EQ(only(r).masked_loops, 0) << inspect::toText(r);
    EXPECT_GE(only(r).dense_loops, 1) << inspect::toText(r);
    expectMaskedTailsOnly(only(r), r);
    EXPECT_GE(only(inspect::inspectKernel(compileRope(false, cpu, 8))).masked_loops, 1);
  }
}

TEST(Inspect, AvxFiveTwelveOffGivesAvx2Code) {
  // "-avx512f" alone, on an AVX-512 CPU: no k-register or zmm is left.
  CompileOptions o;
  o.lanes = 8;
  o.target_cpu = kPinnedAvx512;
  o.target_features = "-avx512f";
  std::string listing = inspect::disassemble(compile(library::rope(), o).object());
  EXPECT_NE(listing.find("vmaskmovps"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("{k"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("zmm"), std::string::npos) << listing;
}

TEST(Inspect, SpecOffDiffNamesTheMaskedLoop) {
  ObjectReport on = inspect::inspectKernel(compileRope(true));
  ObjectReport off = inspect::inspectKernel(compileRope(false));
  std::string d = inspect::diff(on, off, "spec on", "spec off");
  EXPECT_NE(d.find("--- spec on\n+++ spec off\n"), std::string::npos) << d;
  EXPECT_NE(d.find("masked loops: 0 -> 1"), std::string::npos) << d;
  EXPECT_NE(d.find("dense loops: 1 -> 0"), std::string::npos) << d;
  EXPECT_NE(d.find("full-packet body:"), std::string::npos) << d;
  EXPECT_EQ(d.find("only in"), std::string::npos) << "entries matched across the _N suffix\n" << d;
  EXPECT_NE(inspect::diff(on, on, "a", "b").find("no differences"), std::string::npos);
}

TEST(Inspect, EveryLibraryKernelHasOnlyDenseInnermostLoops) {
  for (const auto &[cpu, lanes] : {std::pair{kPinnedAvx512, 16}, std::pair{"x86-64-v3", 8}})
    for (const library::Entry &e : library::all()) {
      SCOPED_TRACE(cpu);
      CompileOptions o;
      o.lanes = lanes;
      o.target_cpu = cpu;
      ObjectReport r = inspect::inspectKernel(compile(e.make(), o));
      const FunctionReport &f = only(r);
      EXPECT_GE(f.dense_loops, 1) << e.name << "\n" << inspect::toText(r);
      EXPECT_EQ(f.masked_loops, 0) << e.name << "\n" << inspect::toText(r);
      EXPECT_GT(f.masked_outside_loops, 0) << e.name << ": the tails are masked";
      // Math is inline; the only calls allowed are the C library's memory
      // routines (masked softmax's fill of invalid columns may become memset).
      for (const inspect::CallSite &c : f.calls)
        EXPECT_TRUE(c.target == "memset" || c.target == "memcpy" || c.target == "memmove")
            << e.name << " calls " << c.target;
      EXPECT_TRUE(inspect::disallowedImports(r).empty()) << e.name << "\n" << inspect::toText(r);
    }
}

TEST(Inspect, DiffMatchesHelpersAcrossCompileCounters) {
  auto function = [](std::string name, uint64_t bytes) {
    FunctionReport f;
    f.name = std::move(name);
    f.bytes = bytes;
    return f;
  };
  ObjectReport a, b;
  a.functions = {function("lanejit_x_0", 10), function("lanejit_x_0.dense_body", 20),
                 function("lanejit_x_0.body_1", 30), function("gone", 1)};
  b.functions = {function("lanejit_x_7", 10), function("lanejit_x_7.dense_body", 25),
                 function("lanejit_x_7.body_1", 30), function("new", 1)};
  std::string d = inspect::diff(a, b, "a", "b");
  EXPECT_NE(
      d.find("function lanejit_x_0.dense_body / lanejit_x_7.dense_body:\n    bytes: 20 -> 25"),
      std::string::npos)
      << d;
  EXPECT_EQ(d.find("lanejit_x_0 / lanejit_x_7:"), std::string::npos) << "unchanged: not listed\n"
                                                                     << d;
  EXPECT_NE(d.find("function gone: only in a"), std::string::npos) << d;
  EXPECT_NE(d.find("function new: only in b"), std::string::npos) << d;
  EXPECT_EQ(d.find("body_1"), std::string::npos) << d;
}

TEST(Inspect, JsonCarriesTheFields) {
  std::string json = inspect::toJson(inspect::inspectKernel(compileRope(true)));
  for (const char *key :
       {"\"functions\"", "\"stack_frame\"", "\"red_zone\"", "\"calls\": []", "\"masked_loops\": 0",
        "\"dense_loops\": 1", "\"undefined\": []", "\"loops\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  EXPECT_EQ(std::count(json.begin(), json.end(), '{'), std::count(json.begin(), json.end(), '}'));
}

TEST(Inspect, NonObjectsAreClearErrors) {
  auto message = [](std::string_view bytes) {
    try {
      inspect::inspectObject(bytes);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Io);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("").find("empty object"), std::string::npos);
  EXPECT_NE(message("not an object at all").find("not an object file"), std::string::npos);
  std::string truncated = compileRope(true).object().substr(0, 100);
  EXPECT_NE(message(truncated), "no error");
}

TEST(Inspect, PassDumpShowsChangedPassesAndTimes) {
  std::string log = compileRope(true).dump("passes");
  EXPECT_EQ(log.rfind("; --- input ---\n", 0), 0u) << log;
  EXPECT_NE(log.find("; --- IR after eliminate-slices ---"), std::string::npos) << log;
  EXPECT_NE(log.find("; pass eliminate-slices"), std::string::npos) << log;
  EXPECT_NE(log.find("; pass cse"), std::string::npos) << log;
  EXPECT_NE(log.find(" ms\n"), std::string::npos) << log;
}

// A C object with a helper, an external call, memcpy and a big frame, built
// by the system compiler: what the metrics must show when helpers exist.
class CObject : public ::testing::Test {
protected:
  static std::string object_;
  static void SetUpTestSuite() {
    fs::path dir = fs::temp_directory_path() / ("lanejit_inspect_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "c.c") << R"(
#include <string.h>
void external_sink(float *);
__attribute__((noinline)) static void helper(float *p) { for (int i = 0; i < 64; ++i) p[i] *= 2; }
void entry(float *p, const float *q) {
  float local[256];
  memcpy(local, q, sizeof local);
  helper(local);
  external_sink(local);
  memcpy(p, local, sizeof local);
}
)";
    std::string cmd = "cc -O1 -fno-pic -fno-stack-protector -c '" + (dir / "c.c").string() +
                      "' -o '" + (dir / "c.o").string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(dir / "c.o", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    object_ = bytes.str();
    fs::remove_all(dir);
  }
  const FunctionReport &function(const ObjectReport &r, const std::string &name) {
    for (const FunctionReport &f : r.functions)
      if (f.name == name)
        return f;
    ADD_FAILURE() << "no function " << name << " in\n" << inspect::toText(r);
    return r.functions.at(0);
  }
};
std::string CObject::object_;

TEST_F(CObject, CallsNameHelpersAndImports) {
  ObjectReport r = inspect::inspectObject(object_);
  ASSERT_EQ(r.functions.size(), 2u) << inspect::toText(r);
  const FunctionReport &entry = function(r, "entry");
  std::vector<std::string> targets;
  for (const inspect::CallSite &c : entry.calls)
    targets.push_back(c.target + (c.internal ? "(internal)" : ""));
  EXPECT_NE(std::find(targets.begin(), targets.end(), "helper(internal)"), targets.end())
      << inspect::toText(r);
  EXPECT_NE(std::find(targets.begin(), targets.end(), "external_sink"), targets.end())
      << inspect::toText(r);
  EXPECT_NE(entry.full_packet_body.find("outlined: calls helper"), std::string::npos)
      << entry.full_packet_body;
  EXPECT_TRUE(function(r, "helper").calls.empty());
  EXPECT_NE(std::find(r.undefined.begin(), r.undefined.end(), "external_sink"), r.undefined.end());
  EXPECT_EQ(inspect::disallowedImports(r), std::vector<std::string>{"external_sink"});
  // What `lanejit aot` refuses: the message names the import and the rule.
  try {
    aot::requireAllowedImports(object_, "c.o");
    ADD_FAILURE() << "an object importing external_sink was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "the object for 'c.o' imports external_sink; an AOT object "
                                     "may import only memcpy, memmove, memset");
  }
}

TEST_F(CObject, FrameFromThePrologueWithoutAStackSizesSection) {
  ObjectReport r = inspect::inspectObject(object_); // `entry` refers into it
  const FunctionReport &entry = function(r, "entry");
  EXPECT_EQ(entry.stack_source, "prologue");
  EXPECT_GE(entry.stack_frame, 1024) << "float local[256]";
  EXPECT_LT(entry.stack_frame, 1024 + 128);
}

} // namespace
} // namespace lanejit
