// Compile here, run there: every case is compiled twice with the same
// options, for this x86 host and for aarch64 (apple-m1); the host kernel
// runs here, the aarch64 object runs under qemu-aarch64 in the cross-built
// runner (tools/object_run), on the same inputs, and every output must have
// the same bits (docs/aarch64.md). Cases: the library operators (f32,
// bf16, f16 storage), each W, switch sets, 1-3 threads, tails; in-place
// calls; a few hundred seeded random row programs; the AOT header and
// object linked into a C driver by the cross compiler.
#include "cross/aarch64_batch.h"

#include "launch/row_launch.h"
#include "support/command_line.h"
#include "support/random_row_program.h"
#include "support/testing.h"

#include <lanejit/aot.h>
#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#ifndef LANEJIT_SOURCE_DIR
#error "tests/CMakeLists.txt defines LANEJIT_SOURCE_DIR (the AOT driver's source)"
#endif

namespace lanejit {
namespace {

constexpr const char *kTriple = "aarch64-linux-gnu";
constexpr const char *kCpu = "apple-m1";

// The aarch64 twin of host options: the same switches, another target.
CompileOptions forAarch64(CompileOptions o) {
  o.target_triple = kTriple;
  o.target_cpu = kCpu;
  o.target_features.clear();
  return o;
}

// Switches that print or measure instead of changing code.
bool printsOrMeasures(const std::string &name) {
  return name == "DUMP_PASSES" || name == "TIME_PASSES" || name == "TUNE_ON_FIRST_CALL";
}

// Switch sets every library operator runs with.
using SwitchSet = std::pair<std::string, std::function<void(CompileOptions &)>>;
const std::vector<SwitchSet> &switchSets() {
  static const std::vector<SwitchSet> sets = {
      {"defaults", [](CompileOptions &) {}},
      {"all on",
       [](CompileOptions &o) {
         for (const std::string &name : CompileOptions::switchNames())
           if (!printsOrMeasures(name))
             o.setSwitch(name, true);
         o.stream_min_kib = o.prefetch_min_kib = 0; // streaming and prefetch at every size
       }},
      {"all off",
       [](CompileOptions &o) {
         for (const std::string &name : CompileOptions::switchNames())
           o.setSwitch(name, false);
       }},
      {"mixed: unfused pointwise, unbounded masks, branchless tail, streaming",
       [](CompileOptions &o) {
         o.fuse_pointwise = o.bound_masked_columns = o.leftover_loop = false;
         o.branchless_tail = o.stream_stores = true;
         o.stream_min_kib = 0;
       }},
      {"mixed: unfused outputs, masked full packets, guards per row, inlined, output loops "
       "not unrolled, lane-masked bounded tails",
       [](CompileOptions &o) {
         o.fuse_outputs = o.specialize_full_packets = o.hoist_guards = false;
         o.prove_in_place = o.single_max_accumulator = o.fill_stores = false;
         o.unroll_output_loops = o.in_row_tails = false;
         o.inline_packet_bodies = CompileOptions::Inline::Always;
       }},
  };
  return sets;
}

// One queued call: what the host computed, to compare with the aarch64
// run's buffers.
struct Expected {
  std::string label, detail;
  std::vector<check::GuardedBuffer> outputs; // the host's (an aliased output: its input)
};

// The calls of one test: each queues the aarch64 kernel's call on a seeded
// case and runs the host kernel on the same case; then one qemu run of
// them all, and the comparison.
class CrossRun {
public:
  explicit CrossRun(const std::string &scratch_name)
      : scratch_(scratch_name), batch_(scratch_.path()) {}

  // `detail` (a random program's text) is shown with a mismatch.
  void add(const std::string &label, const Kernel &host, const Kernel &arm, Shape shape,
           int threads, uint64_t seed, int64_t pad, const std::vector<int> &aliases = {},
           const std::string &detail = "") {
    check::Case c = check::makeCase(host.program(), shape, check::Fill::Random, seed, pad);
    if (special_)
      plantSpecialValues(c, seed);
    batch_.add(label, arm, c, threads, aliases);
    std::vector<BufferRef> ins = c.inputRefs(), outs = c.outputRefs();
    Expected e{label, detail, {}};
    for (size_t o = 0; o < outs.size(); ++o)
      if (o < aliases.size() && aliases[o] >= 0) {
        const check::GuardedBuffer &in = c.inputs[static_cast<size_t>(aliases[o])];
        outs[o] = BufferRef::matrix(in.raw(), c.outputs[o].rows(), c.outputs[o].cols(),
                                    in.rowStride());
      }
    host.run(ins, outs, threads);
    for (size_t o = 0; o < outs.size(); ++o)
      e.outputs.push_back(o < aliases.size() && aliases[o] >= 0
                              ? c.inputs[static_cast<size_t>(aliases[o])]
                              : c.outputs[o]);
    expected_.push_back(std::move(e));
  }

  // Later calls' float inputs get NaNs (quiet, signalling, either sign,
  // with payloads), infinities, signed zeros, subnormals and the largest
  // finite values among their random ones.
  void withSpecialValues(bool on) { special_ = on; }

  // Runs the batch under qemu and compares; prints the first mismatches
  // and a summary line.
  void runAndCompare(const test::CrossTools &tools, const char *what) {
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(batch_.run(tools));
    double qemu_s = seconds(start);
    int mismatches = 0;
    size_t compared = 0;
    for (size_t i = 0; i < expected_.size(); ++i)
      for (size_t o = 0; o < expected_[i].outputs.size(); ++o) {
        ++compared;
        ::testing::AssertionResult same = test::sameBits(
            expected_[i].outputs[o], batch_.outputBytes(i, o),
            expected_[i].label + ", output " + std::to_string(o));
        if (!same && ++mismatches <= 10)
          ADD_FAILURE() << same.message() << "\n" << expected_[i].detail;
      }
    EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << compared
                             << " outputs differ between x86 and aarch64";
    std::printf("[ cross    ] %s: %zu calls, %zu outputs compared bit for bit, %d differ; "
                "qemu run %.1f s\n",
                what, expected_.size(), compared, mismatches, qemu_s);
  }

  static double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  }

private:
  static void plantSpecialValues(check::Case &c, uint64_t seed) {
    static const uint32_t kBits[] = {0x7fc00000, 0x7fc12345, 0xffc00001, 0x7f800001, 0xff812345,
                                     0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001,
                                     0x807fffff, 0x7f7fffff, 0xff7fffff, 0x00800000};
    size_t k = seed;
    for (check::GuardedBuffer &in : c.inputs) {
      if (in.type() == DType::I8)
        continue;
      for (int64_t r = 0; r < in.rows(); ++r)
        for (int64_t col = 0; col < in.cols(); ++col)
          if ((r * in.cols() + col + int64_t(seed)) % 5 == 0) {
            float v;
            uint32_t bits = kBits[k++ % std::size(kBits)];
            std::memcpy(&v, &bits, sizeof v);
            in.set(r, col, v);
          }
    }
  }

  bool special_ = false;
  test::ScratchDir scratch_;
  test::Aarch64Batch batch_;
  std::vector<Expected> expected_;
};

class Cross : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // Split every call of more than one row, as the runner does: the host
    // side then runs 2-3 threads too, whatever the cost model would say.
    launch::setMinWorkNs(0);
  }
  void SetUp() override {
#ifdef LANEJIT_SANITIZED
    // The runner under qemu is not instrumented and the host side is the
    // compile path every other test covers; the suite's time goes elsewhere.
    GTEST_SKIP() << "aarch64 cross tests skipped in sanitizer builds";
#endif
    tools_ = test::crossTools();
    if (std::string missing = tools_.missing(); !missing.empty())
      GTEST_SKIP() << "aarch64 cross tests skipped: " << missing;
  }
  test::CrossTools tools_;
};

// Column counts for one kernel: below W, W's tails, odd and even, several
// packets; multiples of `multiple` (RoPE 2, Q8_0 32).
std::vector<Shape> shapesFor(int lanes, int64_t multiple, size_t variant) {
  std::vector<int64_t> cols;
  if (multiple >= 32) {
    cols = {32, 64, 96};
  } else {
    cols = {1, 3, lanes - 1, lanes + 1, 2 * lanes, 37, 66, 133};
    for (int64_t &c : cols)
      c = std::max<int64_t>(c, 1) * multiple;
  }
  constexpr int64_t rows[] = {1, 3, 17, 5, 2};
  // Three shapes per kernel, a different three for each variant.
  std::vector<Shape> shapes;
  for (size_t k = 0; k < 3; ++k) {
    size_t i = (variant * 3 + k) % cols.size();
    shapes.push_back({rows[(variant + k) % 5], cols[i]});
  }
  return shapes;
}

int64_t columnMultiple(const std::string &op) {
  if (op == "rope")
    return 2;
  if (op == "quantize_q8_0" || op == "rmsnorm_q8_0")
    return 32;
  return 1;
}

std::vector<library::Entry> libraryEntries() {
  std::vector<library::Entry> entries = library::all();
  for (const library::Entry &e : library::quantizing())
    entries.push_back(e);
  return entries;
}

// One operator per test, so that ctest spreads them over the cores.
class CrossLibrary : public Cross, public ::testing::WithParamInterface<std::string> {};

TEST_P(CrossLibrary, OperatorHasTheSameBitsOnAarch64) {
  const std::string op = GetParam();
  auto start = std::chrono::steady_clock::now();
  CrossRun run("lanejit_cross_" + op);
  size_t variant = 0;
  for (DType storage : {DType::F32, DType::BF16, DType::F16}) {
    Program program =
        storage == DType::F32 ? library::byName(op) : withStorage(library::byName(op), storage);
    for (int lanes : {4, 8, 16})
      for (const SwitchSet &set : switchSets()) {
        // Half-precision storage: the defaults and all-off at each W, the
        // other sets at one W each (the f32 sweep has them everywhere).
        if (storage != DType::F32 && set.first != "defaults" && set.first != "all off" &&
            (variant % 3) != 0) {
          ++variant;
          continue;
        }
        CompileOptions o = test::targetOptions();
        o.lanes = lanes;
        set.second(o);
        Kernel host = compile(program, o);
        Kernel arm = compile(program, forAarch64(o));
        std::string label = op + " " + std::string(name(storage)) + " W" +
                            std::to_string(lanes) + " " + set.first;
        int threads = 1 + static_cast<int>(variant % 3);
        for (Shape s : shapesFor(lanes, columnMultiple(op), variant)) {
          int64_t pad = (variant + s.cols) % 2 ? 3 : 0;
          run.add(label + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " pad " +
                      std::to_string(pad) + " t" + std::to_string(threads),
                  host, arm, s, threads, variant + 1, pad);
        }
        ++variant;
      }
  }
  std::printf("[ cross    ] %s: compiled and ran on x86 in %.1f s\n", op.c_str(),
              CrossRun::seconds(start));
  run.runAndCompare(tools_, op.c_str());
}

INSTANTIATE_TEST_SUITE_P(Library, CrossLibrary, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const library::Entry &e : libraryEntries())
                             names.push_back(e.name);
                           return names;
                         }()),
                         [](const auto &info) { return info.param; });

// NaNs of every kind, infinities, signed zeros and subnormals through the
// operators and through IEEE max/min and NaN canonicalisation, which have
// AArch64 forms of their own (fmax/fmin, facge): the same bits.
TEST_F(Cross, SpecialValuesHaveTheSameBitsOnAarch64) {
  CrossRun run("lanejit_cross_special");
  run.withSpecialValues(true);
  std::vector<Program> programs;
  for (const auto *entries : {&library::all(), &library::quantizing()})
    for (const library::Entry &e : *entries)
      programs.push_back(e.make());
  programs.push_back(parse(R"(program minmax {
  in x: f32[R, C]
  in y: f32[R, C]
  out a: f32[R, C]
  out b: f32[R, C]
  %0 = load x[0:C]
  %1 = load y[0:C]
  %2 = max %0, %1
  %3 = min %0, %1
  %4 = reduce.max %0
  %5 = reduce.min %1
  %6 = add %2, %4
  %7 = sub %3, %5
  a[0:C] = %6
  b[0:C] = %7
})",
                           "minmax"));
  size_t variant = 0;
  for (const Program &program : programs)
    for (int lanes : {4, 8, 16})
      for (const char *set : {"defaults", "all off"}) {
        CompileOptions o = test::targetOptions();
        o.lanes = lanes;
        for (const SwitchSet &s : switchSets())
          if (s.first == set)
            s.second(o);
        Kernel host = compile(program, o);
        Kernel arm = compile(program, forAarch64(o));
        int64_t cols = program.name.find("q8_0") != std::string::npos ? 64
                       : program.name == "rope"                       ? 38
                                                                      : 37;
        run.add(program.name + " W" + std::to_string(lanes) + " " + set, host, arm, {5, cols},
                1 + int(variant % 2), variant + 1, 0);
        ++variant;
      }
  run.runAndCompare(tools_, "special values");
}

// The comparison is not vacuous: an aarch64 kernel of another program
// (y = 3x where the host computes y = 2x) is caught, with the element named.
TEST_F(Cross, AMismatchIsCaught) {
  test::ScratchDir scratch("lanejit_cross_mismatch");
  test::Aarch64Batch batch(scratch.path());
  auto scale = [](const char *k) {
    return parse(std::string("program scale {\n  in x: f32[R, C]\n  out y: f32[R, C]\n"
                             "  %0 = load x[0:C]\n  %1 = const f32 ") +
                 k + "\n  %2 = mul %0, %1\n  y[0:C] = %2\n}\n");
  };
  CompileOptions o = test::targetOptions();
  Kernel host = compile(scale("2"), o);
  Kernel other = compile(scale("3"), forAarch64(o));
  check::Case c = check::makeCase(host.program(), {3, 21}, check::Fill::Random, 1);
  batch.add("other", other, c, 1);
  host.run(c.inputRefs(), c.outputRefs());
  ASSERT_TRUE(batch.run(tools_));
  std::string arm = batch.outputBytes(0, 0);
  ::testing::AssertionResult same = test::sameBits(c.outputs[0], arm, "y");
  EXPECT_FALSE(same);
  EXPECT_TRUE(test::has(same.message(), "first [0,0]")) << same.message();
}

// In place: an output that is exactly an input (the same buffer and
// stride), which the kernel's alias guards detect at run time; a program
// whose in-place order is proved safe and one that must take the guarded
// path, and the library operators in place.
TEST_F(Cross, InPlaceCallsHaveTheSameBitsOnAarch64) {
  CrossRun run("lanejit_cross_in_place");
  std::vector<std::pair<std::string, Program>> programs = {
      {"write_ahead", test::writeAheadProgram()}, {"write_behind", test::writeBehindProgram()}};
  for (const char *op : {"rmsnorm", "layernorm", "swiglu", "gelu_residual", "masked_softmax",
                         "rope"})
    programs.emplace_back(op, library::byName(op));
  programs.emplace_back("rmsnorm bf16", withStorage(library::rmsNorm(), DType::BF16));
  programs.emplace_back("rope f16", withStorage(library::rope(), DType::F16));
  const std::vector<SwitchSet> variants = {
      {"defaults", [](CompileOptions &) {}},
      {"prove_in_place off", [](CompileOptions &o) { o.prove_in_place = false; }},
      {"hoist_guards off", [](CompileOptions &o) { o.hoist_guards = false; }},
      {"all off", switchSets()[2].second},
  };
  size_t variant = 0;
  for (const auto &[name, program] : programs)
    for (int lanes : {4, 8, 16})
      for (const SwitchSet &set : variants) {
        CompileOptions o = test::targetOptions();
        o.lanes = lanes;
        set.second(o);
        Kernel host = compile(program, o);
        Kernel arm = compile(program, forAarch64(o));
        // C a multiple of 4 for the write-ahead pair (C/4), else odd too.
        for (int64_t cols : {int64_t{12}, int64_t{68}, int64_t{7}}) {
          if ((name.starts_with("write") || name.starts_with("rope")) && cols % 4 != 0)
            continue;
          int threads = 1 + static_cast<int>(variant++ % 2);
          std::string label = name + " W" + std::to_string(lanes) + " " + set.first + " 5x" +
                              std::to_string(cols) + " t" + std::to_string(threads);
          run.add(label, host, arm, {5, cols}, threads, variant, cols == 7 ? 2 : 0, {0});
        }
      }
  run.runAndCompare(tools_, "in-place calls");
}

// 300 programs in three shards of 100, so that ctest spreads them over the
// cores.
class CrossRandom : public Cross, public ::testing::WithParamInterface<int> {};

TEST_P(CrossRandom, RowProgramsHaveTheSameBitsOnAarch64) {
  auto start = std::chrono::steady_clock::now();
  const int shard = GetParam();
  CrossRun run("lanejit_cross_random_" + std::to_string(shard));
  constexpr int kPrograms = 100;
  constexpr int64_t kCols[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 67, 100};
  constexpr int64_t kEvenCols[] = {2, 4, 6, 8, 10, 16, 18, 34, 66, 100};
  std::vector<std::string> switches = CompileOptions::switchNames();
  for (int seed = shard * kPrograms + 1; seed <= (shard + 1) * kPrograms; ++seed) {
    test::RandomRowProgram p = test::randomRowProgram(static_cast<uint64_t>(seed));
    CompileOptions o = test::targetOptions();
    o.lanes = 4 << (seed % 3);
    // Each switch flipped from its default on about one program in four.
    uint64_t bits = check::hashBytes(&seed, sizeof seed);
    std::string flipped;
    for (size_t i = 0; i < switches.size(); ++i, bits = bits * 6364136223846793005u + 1442695u)
      if ((bits >> 61) < 2 && !printsOrMeasures(switches[i]) &&
          switches[i] != "INLINE_PACKET_BODIES") {
        CompileOptions on;
        on.setSwitch(switches[i], true);
        bool default_on = on.key() == CompileOptions{}.key();
        o.setSwitch(switches[i], !default_on);
        flipped += " " + switches[i] + (default_on ? "=off" : "=on");
      }
    if (seed % 2) // streaming stores and prefetches at every size where switched on
      o.stream_min_kib = o.prefetch_min_kib = 0;
    Kernel host = compile(p.program, o);
    Kernel arm = compile(p.program, forAarch64(o));
    uint64_t h = bits;
    int64_t cols = p.even_cols ? kEvenCols[h % std::size(kEvenCols)] : kCols[h % std::size(kCols)];
    int64_t rows = 1 + static_cast<int64_t>((h >> 8) % 5);
    int threads = 1 + static_cast<int>((h >> 16) % 3);
    int64_t pad = (h >> 24) % 2 ? 3 : 0;
    std::string label = "random seed " + std::to_string(seed) + " W" + std::to_string(o.lanes) +
                        " " + std::to_string(rows) + "x" + std::to_string(cols) + " t" +
                        std::to_string(threads) + flipped;
    run.add(label, host, arm, {rows, cols}, threads, static_cast<uint64_t>(seed), pad, {},
            p.text);
  }
  std::printf("[ cross    ] random shard %d: %d programs compiled and run on x86 in %.1f s\n",
              shard, kPrograms, CrossRun::seconds(start));
  run.runAndCompare(tools_, "random row programs");
}

INSTANTIATE_TEST_SUITE_P(Random, CrossRandom, ::testing::Values(0, 1, 2),
                         [](const auto &info) {
                           int first = info.param * 100 + 1;
                           return "seeds_" + std::to_string(first) + "_to_" +
                                  std::to_string(first + 99);
                         });

void writeFile(const std::string &path, const void *data, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
  if (!out)
    throw Error(Error::Kind::Io, "cannot write " + path);
}

// The header's own buffer count and workspace function (as
// tests/tools/aot_test.cpp reads them), so a wrong header fails here.
int headerBufferCount(const aot::Artifacts &a) {
  size_t at = a.header.find("_BUFFERS ");
  return at == std::string::npos ? -1 : std::atoi(a.header.c_str() + at + 9);
}
std::string headerWorkspaceFunction(const aot::Artifacts &a) {
  std::string prefix = "static inline int64_t ";
  size_t at = a.header.find(prefix);
  if (at == std::string::npos)
    return "missing_workspace_function";
  at += prefix.size();
  return a.header.substr(at, a.header.find('(', at) - at);
}

// `lanejit aot`'s artifacts for aarch64 (aot::build on the aarch64 kernel),
// linked with tests/cross/aot_driver.c by aarch64-linux-gnu-gcc, run under
// qemu on the host kernel's inputs: the same bits, on 1 and 3 threads.
TEST_F(Cross, AotObjectAndHeaderInACDriverHaveTheSameBitsOnAarch64) {
  test::ScratchDir scratch("lanejit_cross_aot");
  std::vector<library::Entry> entries = libraryEntries();
  int drivers = 0, runs = 0;
  for (const library::Entry &e : entries)
    for (int config = 0; config < 2; ++config) {
      // W8 defaults in f32; W4, everything off, bf16 storage.
      Program program = config == 0 ? e.make() : withStorage(e.make(), DType::BF16);
      CompileOptions o = test::targetOptions();
      o.lanes = config == 0 ? 8 : 4;
      if (config == 1)
        switchSets()[2].second(o);
      Kernel host = compile(program, o);
      aot::Artifacts a = aot::build(compile(program, forAarch64(o)));
      std::string name = e.name + "_" + std::to_string(config);
      SCOPED_TRACE(name);
      std::filesystem::path dir = scratch.path() / name;
      std::filesystem::create_directories(dir);
      writeFile((dir / "kernel.o").string(), a.object.data(), a.object.size());
      writeFile((dir / "kernel.h").string(), a.header.data(), a.header.size());
      std::string driver = (dir / "driver").string();
      std::string cc = "'" + tools_.cc + "' -O2 -std=c11 -Wall -Werror -DLANEJIT_ENTRY=" +
                       a.entry_symbol + " -DLANEJIT_BUFFERS=" +
                       std::to_string(headerBufferCount(a)) + " -DLANEJIT_WORKSPACE_FLOATS=" +
                       headerWorkspaceFunction(a) + " -I'" + dir.string() + "' -pthread '" +
                       LANEJIT_SOURCE_DIR + "/tests/cross/aot_driver.c' '" +
                       (dir / "kernel.o").string() + "' -o '" + driver + "' 2>'" +
                       (dir / "cc.log").string() + "'";
      ASSERT_EQ(test::shell(cc), 0) << cc << "\n" << test::slurp(dir / "cc.log");
      ++drivers;
      int64_t cols = columnMultiple(e.name) == 32 ? 64 : 66;
      for (int threads : {1, 3}) {
        check::Case c = check::makeCase(program, {17, cols}, check::Fill::Random, 5, 3);
        std::string args = "17 " + std::to_string(cols) + " " + std::to_string(threads);
        auto buffer = [&](const char *kind, const check::GuardedBuffer &b, const std::string &f) {
          std::string path = (dir / f).string();
          writeFile(path, b.raw(), static_cast<size_t>(b.bytes()));
          args += std::string(" ") + kind + " '" + path + "' " + std::to_string(b.rowStride()) +
                  " " + std::to_string(b.bytes());
        };
        for (size_t i = 0; i < c.inputs.size(); ++i)
          buffer("in", c.inputs[i], "in" + std::to_string(i));
        for (size_t i = 0; i < c.outputs.size(); ++i)
          buffer("out", c.outputs[i], "out" + std::to_string(i));
        host.run(c.inputRefs(), c.outputRefs(), threads);
        std::string log = (dir / "run.log").string();
        std::string command = tools_.qemuCommand() + " '" + driver + "' " + args + " >'" + log +
                              "' 2>&1";
        ASSERT_EQ(test::shell(command), 0) << command << "\n" << test::slurp(log);
        ++runs;
        for (size_t i = 0; i < c.outputs.size(); ++i)
          EXPECT_TRUE(test::sameBits(c.outputs[i], test::slurp(dir / ("out" + std::to_string(i))),
                                     name + " threads " + std::to_string(threads) + " output " +
                                         program.outputs[i].name));
      }
    }
  std::printf("[ cross    ] AOT: %d C drivers linked for aarch64, %d runs under qemu\n", drivers,
              runs);
}

} // namespace
} // namespace lanejit
