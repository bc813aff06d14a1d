// `lanejit bench`: the seed's measurement protocol over library operators or
// any program, with checks on every visit and an evidence bundle
// (docs/bench.md explains the output, docs/bench-bundle.md the bundle).
#include "commands.h"

#include "runner.h"

#include <lanejit/error.h>

#include <CLI/CLI.hpp>

#include <memory>

namespace lanejit::cli {
namespace {

struct BenchArgs {
  bool quick = false;
  std::string protocol;
  double warmup_ms = -1, target_ms = -1;
  int samples = -1;
  std::vector<std::string> cases, programs, shapes, variants;
  std::string out;
  bool no_progress = false;
  bool aot = false;
  bool threads_given = false;
  std::string case_set; // --cases: default, decode, narrow or bf16
  int threads = 0;      // --threads; 0: the affinity count
};

// --protocol picks the base (quick unless asked); any of --warmup-ms,
// --target-ms, --samples then makes it "custom".
bench::ProtocolSettings protocolOf(const BenchArgs &args) {
  if (args.quick && args.protocol == "seed")
    throw Error(Error::Kind::Bind, "bench: --quick and --protocol=seed contradict each other");
  bench::ProtocolSettings p =
      args.protocol == "seed" ? bench::ProtocolSettings::seed() : bench::ProtocolSettings::quick();
  bool custom = false;
  if (args.warmup_ms >= 0) {
    p.warmup_s = args.warmup_ms * 1e-3;
    custom = true;
  }
  if (args.target_ms >= 0) {
    p.target_s = args.target_ms * 1e-3;
    custom = true;
  }
  if (args.samples >= 0) {
    if (args.samples < 1)
      throw Error(Error::Kind::Bind, "bench: --samples must be at least 1");
    p.samples = args.samples;
    custom = true;
  }
  if (custom)
    p.name = "custom";
  return p;
}

bench::BenchOptions optionsOf(const BenchArgs &args) {
  bench::BenchOptions options;
  options.protocol = protocolOf(args);
  if (args.programs.size() != args.shapes.size())
    throw Error(Error::Kind::Bind, "bench: give one --shape RxC per --program FILE");
  if (args.threads < 0 || (args.threads == 0 && args.threads_given))
    throw Error(Error::Kind::Bind, "bench: --threads " + std::to_string(args.threads) +
                                       ": a thread count must be at least 1");
  options.threads = args.threads;
  if (args.case_set == "decode")
    options.cases = bench::decodeCases();
  if (args.case_set == "narrow")
    options.cases = bench::narrowCases();
  if (args.case_set == "bf16")
    options.cases = bench::halfCases();
  if (args.case_set == "int8")
    options.cases = bench::int8Cases();
  if (!args.cases.empty() || !args.programs.empty()) {
    if (!args.case_set.empty())
      throw Error(Error::Kind::Bind, "bench: --cases and --case/--program exclude each other");
    options.cases.clear();
    for (const std::string &spec : args.cases)
      options.cases.push_back(bench::libraryCase(spec));
    for (size_t i = 0; i < args.programs.size(); ++i)
      options.cases.push_back(bench::programCase(args.programs[i], args.shapes[i]));
  }
  options.only = args.variants;
  options.aot = args.aot;
  options.out_dir = args.out;
  options.progress = !args.no_progress;
  return options;
}

} // namespace

std::function<int()> addBenchCommand(CLI::App &app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App *bench = app.add_subcommand(
      "bench", "time variants of each case with the seed's protocol; write an evidence bundle");
  bench->add_flag("--quick", args->quick, "the main job's short protocol (the default)");
  bench->add_option("--protocol", args->protocol, "quick, or seed: 100 ms / 30 ms / 7 samples")
      ->check(CLI::IsMember({"quick", "seed"}));
  bench->add_option("--warmup-ms", args->warmup_ms, "warmup per visit (custom protocol)");
  bench->add_option("--target-ms", args->target_ms, "minimum sample length (custom protocol)");
  bench->add_option("--samples", args->samples, "samples per visit (custom protocol)");
  bench->add_option("--case", args->cases,
                    "library case OP:RxC[:TYPE], e.g. rope:17x66 or rmsnorm:1024x4097:bf16 "
                    "(repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bench->add_option("--program", args->programs, "text program file (repeatable, with --shape)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bench->add_option("--shape", args->shapes, "RxC for the --program at the same position")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bench
      ->add_option("--variants", args->variants,
                   "keep only these variants, e.g. lanejit,naive (default: all)")
      ->delimiter(',');
  bench
      ->add_option("--cases", args->case_set,
                   "a case set: default (the main job's), decode (few long rows), narrow "
                   "(rows of 8 and 64 columns), bf16 (the large shape in f32, bf16 and f16, "
                   "decode in bf16) or int8 (rmsnorm_q8 at 1024x4097 and 1x4096, rmsnorm_q8_0 "
                   "at 1024x4096 and 1x4096, f32 and bf16 inputs)")
      ->check(CLI::IsMember({"default", "decode", "narrow", "bf16", "int8"}));
  bench
      ->add_option("--threads", args->threads,
                   "top thread count N: lanejit-t2 .. lanejit-tN and the peers at those counts "
                   "(default: the CPU affinity count; 1: single-thread only)")
      ->each([args](const std::string &) { args->threads_given = true; });
  bench->add_option("--out", args->out, "bundle directory (default out/bench-<UTC time>)");
  bench->add_flag("--no-progress", args->no_progress, "no progress lines on stderr");
  bench->add_flag("--aot", args->aot,
                  "add lanejit-aot: the kernel's object linked by cc -shared and loaded, timed "
                  "beside the JIT's entry (always under --protocol=seed)");
  return [args] { return bench::benchCommand(optionsOf(*args)); };
}

} // namespace lanejit::cli
