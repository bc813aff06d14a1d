// The demo: correctness and speed of every library operator next to a plain
// C++ loop, measured with the seed's interleaved-rounds protocol (scaled down
// for --quick).
#include "demo.h"

#include "naive_loops.h"

#include <lanejit/check.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

namespace lanejit::bench {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Protocol {
  double warmup_s;
  double target_s; // a sample lasts at least this long
  int samples;
  int rounds; // alternating AB / BA, so even
};

Protocol protocolFor(bool quick) {
  if (quick)
    return {0.020, 0.005, 7, 4};
  return {0.100, 0.030, 7, 6};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Seconds for `reps` back-to-back calls.
template <typename F> double timeReps(const F &fn, int64_t reps) {
  auto start = Clock::now();
  for (int64_t i = 0; i < reps; ++i)
    fn();
  return secondsSince(start);
}

// One visit: warm up, double the repetitions until a sample is long enough
// (reading the clock costs ~30 ns, so single calls cannot be timed), then
// take the median time per call of `samples` samples.
template <typename F> double visit(const F &fn, const Protocol &p) {
  auto start = Clock::now();
  while (secondsSince(start) < p.warmup_s)
    fn();
  int64_t reps = 1;
  while (timeReps(fn, reps) < p.target_s)
    reps *= 2;
  std::vector<double> per_call;
  for (int i = 0; i < p.samples; ++i)
    per_call.push_back(timeReps(fn, reps) / static_cast<double>(reps));
  return median(per_call);
}

struct DemoCase {
  std::string op;
  Shape shape;
  std::string label() const { return fmt::format("{} {}x{}", op, shape.rows, shape.cols); }
};

std::vector<DemoCase> demoCases() {
  // The seed's six cases first (RoPE's odd halves split mid-packet), then the
  // other operators at the same sizes.
  std::vector<DemoCase> cases = {
      {"rope", {17, 66}},          {"rope", {1024, 4098}}, {"layernorm", {17, 65}},
      {"layernorm", {1024, 4097}}, {"swiglu", {17, 65}},   {"swiglu", {1024, 4097}},
  };
  for (const char *op : {"rmsnorm", "gelu_residual", "masked_softmax"}) {
    cases.push_back({op, {17, 65}});
    cases.push_back({op, {1024, 4097}});
  }
  return cases;
}

std::vector<uint64_t> hashes(const std::vector<check::GuardedBuffer> &buffers) {
  std::vector<uint64_t> result;
  for (const check::GuardedBuffer &b : buffers)
    result.push_back(b.hash());
  return result;
}

bool guardsIntact(const check::Case &c) {
  auto intact = [](const check::GuardedBuffer &b) { return b.guardsIntact(); };
  return std::all_of(c.inputs.begin(), c.inputs.end(), intact) &&
         std::all_of(c.outputs.begin(), c.outputs.end(), intact);
}

// The naive loop bound to a case's own buffers.
struct NaiveCall {
  const NaiveOp *op = nullptr;
  std::vector<const float *> inputs;
  float *output = nullptr;
  int64_t rows = 0, cols = 0;
  void operator()() const { op->fn(inputs.data(), output, rows, cols); }
};

NaiveCall bindNaive(const NaiveOp &op, check::Case &c) {
  NaiveCall call{&op, {}, c.outputs.at(0).data(), c.shape.rows, c.shape.cols};
  for (std::string_view name : op.inputs) {
    int index = c.program.inputIndex(name);
    if (index < 0)
      throw Error(Error::Kind::Bind,
                  fmt::format("naive {}: program has no input '{}'", op.name, name));
    call.inputs.push_back(c.inputs[index].data());
  }
  return call;
}

// The native entry's argument block, built once from a case's buffers.
struct NativeCall {
  NativeEntry entry = nullptr;
  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  check::GuardedBuffer workspace; // 64-byte aligned, touched once
  LaunchArgs args{};
  void operator()() const { entry(&args, 0, args.rows); }
};

void bindNative(NativeCall &call, const Kernel &kernel, check::Case &c) {
  call.entry = kernel.nativeEntry();
  for (auto *list : {&c.inputs, &c.outputs}) {
    for (check::GuardedBuffer &b : *list) {
      call.buffers.push_back(b.data());
      call.strides.push_back(b.rowStride());
    }
  }
  int64_t ws = kernel.workspaceFloats(c.shape.cols);
  call.workspace = check::GuardedBuffer(1, ws, ws);
  call.workspace.fill(0);
  call.args = LaunchArgs{call.buffers.data(), call.strides.data(), c.shape.rows, c.shape.cols,
                         ws ? call.workspace.data() : nullptr};
}

struct Row {
  std::string label;
  double compile_ms = 0;
  bool cached = false;
  CompileStats stats;
  check::Comparison lanejit, naive;
  bool inputs_unchanged = true, guards_intact = true, outputs_stable = true;
  std::vector<double> lanejit_s, naive_s; // visit medians per round
  std::string error;                      // a thrown error, if any
  bool passed() const {
    return error.empty() && lanejit.ok() && naive.ok() && inputs_unchanged && guards_intact &&
           outputs_stable;
  }
};

std::string checkText(const Row &row) {
  if (!row.error.empty())
    return "ERROR";
  if (!row.lanejit.ok())
    return "FAIL";
  if (!row.inputs_unchanged)
    return "FAIL(in)";
  if (!row.guards_intact)
    return "FAIL(guard)";
  if (!row.outputs_stable)
    return "FAIL(bits)";
  return "PASS";
}

std::string micros(double seconds) {
  double us = seconds * 1e6;
  return us < 10     ? fmt::format("{:.3f}", us)
         : us < 1000 ? fmt::format("{:.2f}", us)
                     : fmt::format("{:.1f}", us);
}

std::string ratioText(const Row &row) {
  if (row.lanejit_s.empty())
    return "-";
  std::vector<double> ratios;
  int wins = 0;
  for (size_t i = 0; i < row.lanejit_s.size(); ++i) {
    ratios.push_back(row.lanejit_s[i] / row.naive_s[i]);
    wins += ratios.back() < 1.0;
  }
  auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  return fmt::format("{:.3f} [{:.3f}–{:.3f}] {}/{}", median(ratios), *lo, *hi, wins, ratios.size());
}

constexpr const char *kRowFormat = "{:<26} {:>10} {:>11} {:>11} {:>11} {:>16} {:>11} {:>10}  {}\n";

void printHeader() {
  fmt::print(kRowFormat, "case", "compile ms", "max abs err", "max rel err", "check",
             "naive abs err", "lanejit µs", "naive µs", "ratio [min–max] wins");
}

void printRow(const Row &row) {
  std::string naive = row.error.empty() ? fmt::format("{:.2e} {}", row.naive.max_abs_error,
                                                      row.naive.ok() ? "PASS" : "FAIL")
                                        : "-";
  std::string compile = fmt::format("{:.1f}{}", row.compile_ms, row.cached ? "*" : "");
  fmt::print(kRowFormat, row.label, compile, fmt::format("{:.2e}", row.lanejit.max_abs_error),
             fmt::format("{:.2e}", row.lanejit.max_rel_error), checkText(row), naive,
             row.lanejit_s.empty() ? "-" : micros(median(row.lanejit_s)),
             row.naive_s.empty() ? "-" : micros(median(row.naive_s)), ratioText(row));
  if (!row.error.empty())
    fmt::print("    error: {}\n", row.error);
  if (!row.lanejit.first_failure.empty())
    fmt::print("    lanejit: {} of {} elements out of tolerance; first {}\n", row.lanejit.failures,
               row.lanejit.checked, row.lanejit.first_failure);
  if (!row.naive.first_failure.empty())
    fmt::print("    naive: {} of {} elements out of tolerance; first {}\n", row.naive.failures,
               row.naive.checked, row.naive.first_failure);
  std::fflush(stdout);
}

void measure(Row &row, const DemoCase &dc, const DemoOptions &options, const Protocol &protocol) {
  Program program = library::byName(dc.op);
  const NaiveOp *op = naiveOp(dc.op);
  if (!op)
    throw Error(Error::Kind::Bind, "no naive loop for " + dc.op);

  auto start = Clock::now();
  Kernel kernel = compile(program, options.compile);
  row.compile_ms = secondsSince(start) * 1e3;
  row.stats = kernel.stats();
  row.cached = row.stats.cache_hit;

  // One checked call through the public entry point.
  check::Case c = check::makeCase(program, dc.shape);
  std::vector<uint64_t> input_hashes = hashes(c.inputs);
  kernel.run(c.inputRefs(), c.outputRefs());
  row.lanejit = check::compareWithReference(c);
  std::vector<uint64_t> output_hashes = hashes(c.outputs);

  // The baseline gets its own buffers (same fixtures) and the same check.
  check::Case n = check::makeCase(program, dc.shape);
  NaiveCall naive = bindNaive(*op, n);
  naive();
  row.naive = check::compareWithReference(n);
  std::vector<uint64_t> naive_hashes = hashes(n.outputs);

  NativeCall native;
  bindNative(native, kernel, c);
  for (int round = 0; round < protocol.rounds; ++round) {
    // Alternate which variant goes first so neither always runs warm or cold.
    if (round % 2 == 0) {
      row.lanejit_s.push_back(visit(native, protocol));
      row.naive_s.push_back(visit(naive, protocol));
    } else {
      row.naive_s.push_back(visit(naive, protocol));
      row.lanejit_s.push_back(visit(native, protocol));
    }
  }

  // After thousands of calls: inputs untouched, no stray writes, and every
  // call produced the same bits as the checked one.
  row.inputs_unchanged = hashes(c.inputs) == input_hashes && hashes(n.inputs) == input_hashes;
  row.guards_intact = guardsIntact(c) && guardsIntact(n);
  row.outputs_stable = hashes(c.outputs) == output_hashes && hashes(n.outputs) == naive_hashes;
}

// The vector extensions that matter for the timings, out of LLVM's long
// feature string.
std::string vectorFeatures(const std::string &features) {
  std::string result;
  for (const char *name : {"+avx512f,", "+avx512bw,", "+avx512vl,", "+avx2,", "+fma,"})
    if ((features + ",").find(name) != std::string::npos)
      result += (result.empty() ? "" : " ") + std::string(name + 1, std::strlen(name) - 2);
  return result.empty() ? "no AVX2/AVX-512" : result;
}

std::string loadAverage() {
  double load[3];
  if (getloadavg(load, 3) != 3)
    return "unavailable";
  return fmt::format("{:.2f} {:.2f} {:.2f}", load[0], load[1], load[2]);
}

} // namespace

int runDemo(const DemoOptions &options) {
  Protocol protocol = protocolFor(options.quick);
  fmt::print("lanejit demo ({}): {} ms warmup, samples >= {} ms, {} samples, {} rounds "
             "(AB/BA alternating)\n",
             options.quick ? "quick" : "full", protocol.warmup_s * 1e3, protocol.target_s * 1e3,
             protocol.samples, protocol.rounds);
  fmt::print("options: {}\n", options.compile.key());
  fmt::print("load average before: {}\n\n", loadAverage());
  printHeader();

  bool all_passed = true;
  std::optional<CompileStats> target;
  for (const DemoCase &dc : demoCases()) {
    if (!options.only.empty() && dc.label().find(options.only) == std::string::npos)
      continue;
    Row row;
    row.label = dc.label();
    try {
      measure(row, dc, options, protocol);
    } catch (const std::exception &e) {
      row.error = e.what();
    }
    all_passed = all_passed && row.passed();
    printRow(row);
    if (!target && row.error.empty())
      target = row.stats;
  }

  fmt::print("\nTimes are medians over rounds of each visit's median time per call "
             "(native entry vs the naive -O3 -march=native loop).\n"
             "ratio = lanejit/naive, the median of the paired per-round ratios (not the ratio "
             "of the\nshown times); [min–max] is their range over rounds, not a confidence "
             "interval; wins = rounds\nwhere lanejit was faster. compile ms marked * came from "
             "the kernel cache.\n");
  if (target)
    fmt::print("target: cpu {}, {} lanes, {}\n", target->cpu, target->lanes,
               vectorFeatures(target->features));
  fmt::print("load average after: {}\n", loadAverage());
  fmt::print("{}\n", all_passed ? "all checks passed" : "SOME CHECKS FAILED");
  return all_passed ? 0 : 1;
}

} // namespace lanejit::bench
