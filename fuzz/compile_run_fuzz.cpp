// Fuzz target: parse -> compile -> run, against the FP64 oracle, with guard
// zones. The input is program text (docs/text-format.md). Text that does not
// parse, or a program too big to keep one input well under a second, is
// skipped. Otherwise the program is compiled twice, with the defaults at
// W = 4 and with a configuration the input's hash picks (W, inlining, each
// switch), and run on seeded random data at a shape the hash picks.
// Findings (each aborts):
//  - anything but lanejit::Error escapes (a crash, another exception);
//  - a guard zone around an input or output is damaged, or an input changed;
//  - the two configurations differ in any output bit (docs/switches.md: no
//    switch, and not W, changes an output bit);
//  - an element the oracle can fairly check (well_conditioned.h) is off by
//    more than check::agrees allows (check::kTolerance, plus one unit of a
//    bf16 or f16 output's last place, one step of an i8 output's).
// A program the compiler rejects with an Error, or a shape bind rejects, is
// not a finding: that is the documented way to refuse input.
#include "fuzz_check.h"
#include "well_conditioned.h"

#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <bit>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

using namespace lanejit;

namespace {

// Bounds on one input's work: a JIT compile costs milliseconds per node.
constexpr size_t kMaxTextBytes = 4096;
constexpr int kMaxNodes = 48;
constexpr size_t kMaxDecls = 8;  // inputs, and outputs
constexpr size_t kMaxWrites = 8;
constexpr int64_t kMaxBufferCols = 1024;
constexpr int64_t kRows[] = {1, 2, 3, 5};
// Column counts: 1, every tail of W = 4, 8, 16, multi-packet sizes, evens
// for C/2 programs, and multiples of 3 and 4 for C/3- and C/4-style Dims.
constexpr int64_t kCols[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 33, 36, 48, 64, 67};

// Element counts, printed at exit when LANEJIT_FUZZ_STATS is set.
struct Stats {
  long runs = 0, compared = 0, skipped = 0, rejected_compile = 0, rejected_shape = 0;
  ~Stats() {
    if (std::getenv("LANEJIT_FUZZ_STATS"))
      std::fprintf(stderr,
                   "compile_run: %ld programs run, %ld elements compared, %ld skipped as "
                   "ill-conditioned, %ld programs refused by compile, %ld by every shape\n",
                   runs, compared, skipped, rejected_compile, rejected_shape);
  }
} stats;

CompileOptions baseline() {
  CompileOptions o; // defaults, not the environment
  o.lanes = 4;
  return o;
}

// A configuration from the hash's bits: W, inlining policy, each switch.
CompileOptions variant(uint64_t h) {
  CompileOptions o;
  constexpr int lanes[] = {4, 8, 16, 16};
  o.lanes = lanes[h & 3];
  constexpr CompileOptions::Inline policies[] = {
      CompileOptions::Inline::CostRule, CompileOptions::Inline::Always,
      CompileOptions::Inline::Never, CompileOptions::Inline::CostRule};
  o.inline_packet_bodies = policies[(h >> 2) & 3];
  bool CompileOptions::*switches[] = {
      &CompileOptions::fuse_pointwise,       &CompileOptions::fuse_reductions,
      &CompileOptions::fuse_outputs,         &CompileOptions::bound_masked_columns,
      &CompileOptions::specialize_full_packets, &CompileOptions::prove_in_place,
      &CompileOptions::hoist_guards};
  for (int i = 0; i < 7; ++i)
    o.*switches[i] = (h >> (4 + i)) & 1;
  return o;
}

std::string describe(const Program &p, Shape shape, const CompileOptions &o) {
  return print(p) + "shape " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
         ", configuration " + o.key();
}

// A case for `shape`, or nothing when bind refuses it or it is too wide.
std::optional<check::Case> caseAt(const Program &p, Shape shape, uint64_t seed, int64_t pad) {
  try {
    check::Case c = check::makeCase(p, shape, check::Fill::Random, seed, pad);
    for (const check::GuardedBuffer &b : c.inputs)
      if (b.cols() > kMaxBufferCols)
        return std::nullopt;
    for (const check::GuardedBuffer &b : c.outputs)
      if (b.cols() > kMaxBufferCols)
        return std::nullopt;
    return c;
  } catch (const Error &) {
    return std::nullopt;
  }
}

// Runs `kernel` on `c`; false when run() refuses the shape. Checks guards
// and that inputs are unchanged.
bool runChecked(const Kernel &kernel, check::Case &c, const std::string &what) {
  std::vector<uint64_t> before;
  for (const check::GuardedBuffer &b : c.inputs)
    before.push_back(b.hash());
  try {
    kernel.run(c.inputRefs(), c.outputRefs());
  } catch (const Error &e) {
    fuzz::require(e.kind() == Error::Kind::Bind,
                  std::string("run() threw a non-Bind Error: ") + e.what() + "\n" + what);
    return false;
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    fuzz::require(c.inputs[i].guardsIntact(), "input " + std::to_string(i) + " guard damaged\n" + what);
    fuzz::require(c.inputs[i].hash() == before[i], "input " + std::to_string(i) + " changed\n" + what);
  }
  for (size_t i = 0; i < c.outputs.size(); ++i)
    fuzz::require(c.outputs[i].guardsIntact(), "output " + std::to_string(i) + " guard damaged\n" + what);
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxTextBytes)
    return 0;
  Program p;
  try {
    p = parse(std::string_view(reinterpret_cast<const char *>(data), size), "<fuzz>");
  } catch (const Error &) {
    return 0; // the parser's own target checks its errors
  }
  int nodes = 0;
  forEachNode(p, [&](const Expr &) { ++nodes; });
  if (nodes > kMaxNodes || p.inputs.size() > kMaxDecls || p.outputs.size() > kMaxDecls ||
      p.writes.size() > kMaxWrites)
    return 0;

  uint64_t h = check::hashBytes(data, size);
  CompileOptions base = baseline(), other = variant(h >> 16);
  std::optional<Kernel> kernel;
  try {
    kernel = compile(p, base);
  } catch (const Error &e) {
    ++stats.rejected_compile;
    if (std::getenv("LANEJIT_FUZZ_STATS"))
      std::fprintf(stderr, "compile_run: compile refused: %s\n", e.what());
    return 0;
  }
  std::optional<Kernel> kernel2;
  try {
    kernel2 = compile(p, other);
  } catch (const Error &e) {
    fuzz::finding(std::string("the baseline compiles but configuration ") + other.key() +
                  " throws: " + e.what() + "\n" + print(p));
  }

  constexpr size_t kColChoices = std::size(kCols);
  int64_t rows = kRows[h % std::size(kRows)];
  size_t first = (h >> 2) % kColChoices;
  int64_t pad = (h >> 8) & 1 ? 3 : 0; // padded rows for the second run
  for (size_t k = 0; k < kColChoices; ++k) {
    Shape shape{rows, kCols[(first + k) % kColChoices]};
    std::optional<check::Case> c = caseAt(p, shape, h, 0);
    if (!c || !runChecked(*kernel, *c, describe(p, shape, base)))
      continue;
    std::string what = describe(p, shape, other);
    std::optional<check::Case> c2 = caseAt(p, shape, h, pad);
    fuzz::require(c2.has_value() && runChecked(*kernel2, *c2, what),
                  "the second configuration refuses a shape the baseline runs\n" + what);
    for (size_t o = 0; o < c->outputs.size(); ++o)
      for (int64_t r = 0; r < shape.rows; ++r)
        for (int64_t col = 0; col < c->outputs[o].cols(); ++col)
          // get() widens exactly and one-to-one (bf16, f16, i8): equal
          // bits in f32 are equal stored bits.
          fuzz::require(std::bit_cast<uint32_t>(c->outputs[o].get(r, col)) ==
                            std::bit_cast<uint32_t>(c2->outputs[o].get(r, col)),
                        "output " + p.outputs[o].name + "[" + std::to_string(r) + "," +
                            std::to_string(col) + "] differs from the baseline's (" +
                            std::to_string(c2->outputs[o].get(r, col)) + " vs " +
                            std::to_string(c->outputs[o].get(r, col)) + ")\n" + what);

    fuzz::ReferenceCheck ref = fuzz::wellConditionedElements(*c);
    for (size_t o = 0; o < c->outputs.size(); ++o) {
      const ReferenceOutput &want = ref.reference[o];
      for (int64_t r = 0; r < want.rows; ++r)
        for (int64_t col = 0; col < want.cols; ++col) {
          if (!ref.comparable[o][r * want.cols + col])
            continue;
          double y = c->outputs[o].get(r, col), w = want.at(r, col);
          bool ok = check::agrees(y, w, p.outputs[o].type);
          fuzz::require(ok, "output " + p.outputs[o].name + "[" + std::to_string(r) + "," +
                                std::to_string(col) + "] = " + std::to_string(y) +
                                ", the oracle says " + std::to_string(w) + "\n" +
                                describe(p, shape, base));
        }
    }
    ++stats.runs;
    stats.compared += ref.compared;
    stats.skipped += ref.skipped;
    return 0;
  }
  ++stats.rejected_shape;
  return 0;
}
