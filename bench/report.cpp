// The markdown report (bench/report.h).
#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace lanejit::bench {
namespace {

std::string g4(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

void addUnique(std::vector<std::string> &list, const std::string &item) {
  if (std::find(list.begin(), list.end(), item) == list.end())
    list.push_back(item);
}

// "-t2" for "lanejit-t2" or "torch-t2": a variant run on N >= 2 threads.
std::string threadSuffix(const std::string &variant) {
  size_t dash = variant.rfind("-t");
  if (dash == std::string::npos || dash + 2 == variant.size() ||
      variant.find_first_not_of("0123456789", dash + 2) != std::string::npos)
    return "";
  return variant.substr(dash);
}

// The ratios the table shows: the case's first variant against each other,
// and each lanejit-tN against the peers at the same thread count (the
// comparison at equal threads the parallel runtime is judged by).
std::vector<const RatioRecord *> headlineRatios(const CaseRecord &c) {
  std::vector<const RatioRecord *> result;
  if (c.variants.empty())
    return result;
  for (const RatioRecord &r : c.ratios)
    if (r.numerator == c.variants.front().name)
      result.push_back(&r);
  for (const RatioRecord &r : c.ratios) {
    std::string suffix = threadSuffix(r.numerator);
    if (r.numerator != c.variants.front().name && r.numerator.starts_with("lanejit-t") &&
        !suffix.empty() && threadSuffix(r.denominator) == suffix &&
        !r.denominator.starts_with("lanejit"))
      result.push_back(&r);
  }
  return result;
}

// How the console names a headline ratio: "/peer" under the first variant,
// "lanejit-t2/torch-t2" for an equal-thread ratio.
std::string consoleLabel(const CaseRecord &c, const RatioRecord &r) {
  return r.numerator == c.variants.front().name ? "/" + r.denominator
                                                : r.numerator + "/" + r.denominator;
}

std::string ratioCell(const RatioSummary &s) {
  return fmt::format("{} [{}–{}] {}/{}", g4(s.median), g4(s.min), g4(s.max), s.wins, s.rounds);
}

// What the seed published for its six cases (Apple M1 Max, FP32, frozen
// TorchInductor, full-packet specialization off, pointwise fusion on; the
// seed note's table): On/Inductor median [range], lost 6/6 rounds each.
struct SeedPublished {
  const char *id, *on_over_inductor;
};
constexpr SeedPublished kSeedPublished[] = {
    {"rope-17x66", "11.25 [11.2–11.53] 0/6"},       {"rope-1024x4098", "4.089 [3.97–4.251] 0/6"},
    {"layernorm-17x65", "3.924 [3.888–3.967] 0/6"}, {"layernorm-1024x4097", "1.088 [1.086–1.09] 0/6"},
    {"swiglu-17x65", "1.934 [1.912–1.965] 0/6"},    {"swiglu-1024x4097", "1.66 [1.641–1.675] 0/6"},
};

std::string timeCell(const CaseRecord &c, const std::string &variant) {
  for (const auto &[name, seconds] : c.time_s)
    if (name == variant)
      return g4(seconds * 1e6);
  return "–";
}

std::string ratioCell(const CaseRecord &c, const std::string &num, const std::string &den) {
  for (const RatioRecord &r : c.ratios)
    if (r.numerator == num && r.denominator == den)
      return ratioCell(r.summary);
  return "–";
}

// "1.352 (memory)": lanejit's time over the floor, and which part bound it.
std::string floorCell(const CaseRecord &c) {
  if (!c.floor || c.floor->bound == "none")
    return "–";
  return g4(c.floor->ratio) + " (" + c.floor->bound + ")";
}

} // namespace

std::string floorTable(const BenchRecord &record) {
  std::string rows;
  for (const CaseRecord &c : record.cases) {
    if (!c.floor)
      continue;
    const FloorRecord &f = *c.floor;
    const ComputeFloorRecord &k = f.compute;
    bool memory = f.memory_unavailable.empty(), compute = k.unavailable.empty();
    std::string why = compute ? "" : "compute unavailable: " + k.unavailable;
    if (!memory)
      why += (why.empty() ? "" : "; ") + std::string("memory unavailable: ") + f.memory_unavailable;
    rows += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", c.id,
        memory ? std::to_string(f.bytes) : "–", memory ? g4(f.memory_s * 1e6) : "–",
        compute ? g4(k.instructions) : "–", compute ? g4(k.vector) : "–",
        compute ? fmt::format("{}, {} GHz", k.issue_width, g4(k.clock_hz / 1e9)) : "–",
        compute ? g4(k.seconds * 1e6) : "–", g4(f.floor_s * 1e6), floorCell(c),
        why.empty() ? k.method : why);
  }
  if (rows.empty())
    return "";
  return "| Case | bytes | memory part (µs) | instructions per call | vector per call | "
         "issue width, clock | compute part (µs) | floor (µs) | time ÷ floor | method |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n" +
         rows;
}

std::string seedTable(const BenchRecord &record) {
  std::string rows;
  for (const SeedPublished &seed : kSeedPublished)
    for (const CaseRecord &c : record.cases) {
      bool with_inductor = std::any_of(c.variants.begin(), c.variants.end(),
                                       [](const VariantRecord &v) { return v.name == "inductor"; });
      if (c.id != seed.id || !with_inductor || c.variants.front().name != "lanejit")
        continue;
      rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", c.id,
                          timeCell(c, "lanejit-unfused"), timeCell(c, "lanejit"),
                          timeCell(c, "inductor"), ratioCell(c, "lanejit", "lanejit-unfused"),
                          ratioCell(c, "lanejit", "inductor"), seed.on_over_inductor);
    }
  if (rows.empty())
    return "";
  return "| Case | lanejit-unfused µs | lanejit µs | inductor µs | lanejit/lanejit-unfused | "
         "lanejit/inductor | the seed's On÷Inductor (M1 Max) |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n" +
         rows;
}

std::string machineCodeTable(const BenchRecord &record) {
  std::string rows;
  for (const CaseRecord &c : record.cases)
    for (const CodeRecord &r : c.machine_code) {
      std::string calls = r.calls.empty() ? "–" : fmt::format("{}", fmt::join(r.calls, " "));
      std::string loops = r.innermost_instructions.empty()
                              ? "–"
                              : fmt::format("{}", fmt::join(r.innermost_instructions, ", "));
      rows += fmt::format("| {} {} | {} | {} | {} | {} | {} | {} | {} |\n", c.id, r.variant,
                          r.function, r.bytes, r.instructions,
                          r.stack_frame < 0 ? std::string("–") : std::to_string(r.stack_frame),
                          r.vector_bits, calls, loops);
    }
  if (rows.empty())
    return "";
  return "| Kernel | function | code bytes | instructions | stack frame bytes | widest vector "
         "bits | calls | innermost loops (instructions each) |\n"
         "|---|---|---:|---:|---:|---:|---|---|\n" +
         rows;
}

std::string reportTable(const BenchRecord &record) {
  std::vector<std::string> variants, ratios;
  for (const CaseRecord &c : record.cases) {
    for (const VariantRecord &v : c.variants)
      addUnique(variants, v.name);
    for (const RatioRecord *r : headlineRatios(c))
      addUnique(ratios, r->numerator + "/" + r->denominator);
  }
  std::string out = "| Case |";
  for (const std::string &v : variants)
    out += " " + v + " µs |";
  for (const std::string &r : ratios)
    out += " " + r + " |";
  bool compiles = std::any_of(record.cases.begin(), record.cases.end(),
                              [](const CaseRecord &c) { return c.compile_times.has_value(); });
  if (compiles)
    out += " cold compile ms | warm compile ms | cached compile ms |";
  out += " roofline | floor | checks |\n|---|";
  for (size_t i = 0; i < variants.size() + ratios.size() + 2 + (compiles ? 3 : 0); ++i)
    out += "---:|";
  out += "---|\n";

  for (const CaseRecord &c : record.cases) {
    out += "| " + c.id + " |";
    for (const std::string &v : variants) {
      auto it = std::find_if(c.time_s.begin(), c.time_s.end(),
                             [&](const auto &entry) { return entry.first == v; });
      out += " " + (it == c.time_s.end() ? std::string("–") : g4(it->second * 1e6)) + " |";
    }
    for (const std::string &key : ratios) {
      std::string cell = "–";
      for (const RatioRecord *r : headlineRatios(c))
        if (r->numerator + "/" + r->denominator == key)
          cell = ratioCell(r->summary);
      out += " " + cell + " |";
    }
    if (compiles) {
      const std::optional<CompileTimesRecord> &t = c.compile_times;
      for (double ms : {t ? t->cold_ms : -1, t ? t->warm_ms : -1, t ? t->cached_ms : -1})
        out += " " + (t ? g4(ms) : std::string("–")) + " |";
    }
    out += " " + (c.roofline ? g4(c.roofline->ratio) : std::string("–")) + " |";
    out += " " + floorCell(c) + " |";
    int failed = c.failedVisits();
    out += failed ? fmt::format(" FAILED ({} visits) |\n", failed) : std::string(" ok |\n");
  }
  return out;
}

std::string consoleTable(const BenchRecord &record) {
  // Column widths from the content, so the blocks line up in a terminal.
  size_t caseWidth = 4, peerWidth = 4;
  for (const CaseRecord &c : record.cases) {
    caseWidth = std::max(caseWidth, c.id.size());
    for (const RatioRecord *r : headlineRatios(c))
      peerWidth = std::max(peerWidth, consoleLabel(c, *r).size());
  }
  std::string out;
  for (const CaseRecord &c : record.cases) {
    std::string first = c.variants.empty() ? std::string("–") : c.variants.front().name;
    auto it = std::find_if(c.time_s.begin(), c.time_s.end(),
                           [&](const auto &entry) { return entry.first == first; });
    std::string time = it == c.time_s.end() ? std::string("–") : g4(it->second * 1e6) + " µs";
    int failed = c.failedVisits();
    std::string compile =
        c.compile_times ? fmt::format("  compile {}/{}/{} ms", g4(c.compile_times->cold_ms),
                                      g4(c.compile_times->warm_ms), g4(c.compile_times->cached_ms))
                        : std::string();
    out += fmt::format("{:<{}}  {} {}  roofline {}  floor {}{}  {}\n", c.id, caseWidth, first,
                       time, c.roofline ? g4(c.roofline->ratio) : std::string("–"),
                       floorCell(c), compile,
                       failed ? fmt::format("FAILED ({} visits)", failed) : std::string("ok"));
    for (const RatioRecord *r : headlineRatios(c))
      out += fmt::format("{:<{}}    {:<{}}  {}\n", "", caseWidth, consoleLabel(c, *r), peerWidth,
                         ratioCell(r->summary));
  }
  return out;
}

std::string reportNotes(const BenchRecord &record) {
  const ProtocolSettings &p = record.protocol;
  std::string notes = fmt::format(
      "Protocol \"{}\": per visit {:g} ms warmup, repetitions doubled until a sample lasts "
      ">= {:g} ms (at most {} calls), {} samples; the visit's value is the median sample / "
      "reps.\n"
      "Rounds visit the variants in every order (all permutations for <= 3 variants, else a "
      "Williams design).\n"
      "Times (µs per call) are medians over rounds of the visit values.\n"
      "A ratio a/b is the median of the per-round ratios a/b, NOT the ratio of the displayed "
      "times; [min–max] is the range of those per-round ratios, NOT a confidence interval; "
      "wins = rounds where a was faster (ratio < 1). Under each case: lanejit (one thread) "
      "against every other variant, then each lanejit-tN against the peers at the same thread "
      "count.\n"
      "roofline = lanejit time / (bytes moved per call / copy bandwidth measured in this run "
      "at the case's footprint); 1 would be the memory-bound floor.\n"
      "floor = lanejit time / max(memory part: bytes / the faster of copy and triad bandwidth "
      "at the case's footprint, compute part: executed vector instructions per call / issue "
      "width / core clock, both measured in this run); (memory) or (compute) names the larger "
      "part, (memory only) a run where the instructions could not be counted.\n"
      "compile cold/warm/cached ms: the default kernel compiled in a fresh process with an "
      "empty persistent cache (LLVM's start-up included), a second kernel in that process, "
      "and a new process finding it in the persistent cache.\n",
      p.name, p.warmup_s * 1e3, p.target_s * 1e3, p.max_reps, p.samples);
  notes += record.passed() ? "Every visit passed its checks (FP64 oracle at atol = rtol = 5e-5, "
                             "inputs unchanged, guard zones intact, output bits stable across "
                             "rounds and equal across lanejit variants, compile report matches "
                             "claims).\n"
                           : "SOME VISITS FAILED THEIR CHECKS: see bundle.json (status).\n";
  return notes;
}

std::string reportMarkdown(const BenchRecord &record) {
  const EnvironmentRecord &env = record.environment;
  std::string out = fmt::format("# lanejit bench ({} protocol)\n\n", record.protocol.name);
  out += fmt::format("- CPU: {} ({} cores), LLVM {}, commit {}{}\n", env.cpu_model, env.cores,
                     env.llvm_version, env.git_commit, env.git_dirty ? " (dirty)" : "");
  out += fmt::format("- load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}\n",
                     env.load_before[0], env.load_before[1], env.load_before[2], env.load_after[0],
                     env.load_after[1], env.load_after[2]);
  out += "- compile options: " + env.compile_options + "\n";
  if (!env.aten_cpu_capability.empty())
    out += "- ATEN_CPU_CAPABILITY=" + env.aten_cpu_capability + "\n";
  out += "\n" + reportTable(record) + "\n" + reportNotes(record);
  if (std::string seed = seedTable(record); !seed.empty())
    out += "\nThe seed's layout (off = fusion off, on = lanejit's default; the last column is "
           "what the seed published on an Apple M1 Max against frozen Inductor, not measured "
           "here):\n\n" +
           seed;
  if (std::string floor = floorTable(record); !floor.empty())
    out += "\nThe floor (docs/bench.md, \"The floor\"; instructions counted by single-stepping "
           "the default entry, vector = instructions with a vector or mask register operand):"
           "\n\n" +
           floor;
  if (std::string code = machineCodeTable(record); !code.empty())
    out += "\nMachine code side by side (lanejit inspect on the objects in this bundle: "
           "objects/<case>/lanejit.o is the lanejit kernel's object, Kernel::object(), whose "
           "entry is the generic one the timed variant runs when C > 1024 — for C <= 1024 it "
           "runs an entry compiled for that C, not in this object; a peer's rows are the "
           "functions it calls, with the parts the compiler split off):\n\n" +
           code;
  out += "\nVariants:\n";
  std::vector<std::string> seen;
  for (const CaseRecord &c : record.cases) {
    for (const VariantRecord &v : c.variants) {
      if (std::find(seen.begin(), seen.end(), v.name) != seen.end())
        continue;
      seen.push_back(v.name);
      out += "- " + v.name + ": " + v.description + "\n";
    }
  }
  return out;
}

} // namespace lanejit::bench
