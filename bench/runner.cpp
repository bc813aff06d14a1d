// The whole run (bench/runner.h).
#include "runner.h"

#include "compile_times.h"

#include "bundle.h"
#include "case_runner.h"
#include "environment.h"
#include "report.h"
#include "sha256.h"

#include "io/staged_directory.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <sched.h>
#include <unistd.h>

namespace lanejit::bench {
namespace fs = std::filesystem;
namespace {

// The CPUs this process may run on: the default top thread count.
int affinityCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 1;
  return std::max(1, CPU_COUNT(&set));
}

using Clock = std::chrono::steady_clock;

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d-%H%M%S", &utc);
  return buffer;
}

// Progress on stderr: the case, variant, round, elapsed time and an estimate
// of what is left (the current case by its own pace, later cases by the
// average so far). One line per round, or per visit when stderr is a tty.
class Progress {
public:
  Progress(size_t cases, bool enabled) : cases_(cases), enabled_(enabled), tty_(isatty(2)) {}

  void startCase(size_t index, const std::string &id) {
    index_ = index;
    id_ = id;
    case_start_ = Clock::now();
  }
  void endCase() { finished_s_ += seconds(case_start_); }

  void visit(const VisitProgress &p) {
    if (!enabled_)
      return;
    bool round_start = p.visits_done % (p.visits_in_case / p.rounds) == 0;
    if (!tty_ && !round_start)
      return;
    double in_case = seconds(case_start_);
    double case_left =
        p.visits_done ? in_case / p.visits_done * (p.visits_in_case - p.visits_done) : 0;
    double per_case = index_ ? finished_s_ / index_ : in_case + case_left;
    double left = case_left + per_case * (cases_ - index_ - 1);
    std::string line =
        fmt::format("[{}/{} {}] round {}/{} {:<16} elapsed {:.1f} s, ~{:.0f} s left", index_ + 1,
                    cases_, id_, p.round, p.rounds, p.variant, seconds(start_), left);
    std::fprintf(stderr, tty_ ? "\r\033[K%s" : "%s\n", line.c_str());
    std::fflush(stderr);
  }
  void done() {
    if (enabled_)
      std::fprintf(stderr, "%sbench: %.1f s\n", tty_ ? "\r\033[K" : "", seconds(start_));
  }

private:
  static double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  }
  size_t cases_;
  bool enabled_, tty_;
  size_t index_ = 0;
  std::string id_;
  Clock::time_point start_ = Clock::now(), case_start_ = Clock::now();
  double finished_s_ = 0;
};

// A misspelt --variants name would silently drop a variant: reject it.
void requireKnownVariants(const std::vector<std::string> &only,
                          const std::vector<LanejitConfig> &configs,
                          const std::vector<std::unique_ptr<Peer>> &peers) {
  std::vector<std::string> known;
  for (const LanejitConfig &config : configs)
    known.push_back(config.name);
  for (const std::unique_ptr<Peer> &peer : peers)
    known.push_back(peer->name());
  for (const std::string &name : only)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw Error(Error::Kind::Bind, fmt::format("bench: unknown variant '{}'; this run has: {}",
                                                 name, fmt::join(known, ", ")));
}

} // namespace

BenchResult runBench(const BenchOptions &options) {
  if (options.cases.empty())
    throw Error(Error::Kind::Bind, "bench: no cases to run");
  BenchResult result;
  // The bundle is written into a hidden sibling and renamed into place at
  // the end: a run that fails part-way leaves no half bundle behind.
  io::StagedDirectory bundle(options.out_dir.empty() ? fs::path("out") / ("bench-" + timestamp())
                                                     : options.out_dir);

  BenchRecord &record = result.record;
  record.protocol = options.protocol;
  record.environment = captureEnvironment(options.compile.key());

  int threads = options.threads > 0 ? options.threads : affinityCount();
  std::vector<std::unique_ptr<Peer>> peers = options.make_peers();
  addThreadedPeers(peers, threads);
  // Before the torch peer is prepared: it settles ATEN_CPU_CAPABILITY here
  // (a probe in child processes), so only when it will run.
  for (const std::unique_ptr<Peer> &peer : peers)
    if (peer->name() == "torch" &&
        (options.only.empty() || std::count(options.only.begin(), options.only.end(), "torch")))
      record.environment.aten_cpu_capability = atenCpuCapability();
  CaseContext context;
  context.protocol = options.protocol;
  context.configs = lanejitConfigs(options.protocol, options.compile, options.aot, threads);
  context.peers = &peers;
  context.only = options.only;
  context.bundle_dir = bundle.staging();
  context.bandwidth_budget_s = options.protocol.name == "quick" ? 0.2 : 1.0;
  requireKnownVariants(options.only, context.configs, peers);
  for (const CaseSpec &spec : options.cases)
    validateCase(spec);
  // Peers with per-process set-up (Inductor's compile) do it for every case
  // now, once; what they build lands in the bundle.
  RunPlan plan;
  plan.dir = context.bundle_dir / "peers";
  for (const CaseSpec &spec : options.cases)
    if (!spec.op.empty())
      plan.cases.push_back({spec.op, spec.shape.rows, spec.shape.cols, caseType(spec)});
  for (const std::unique_ptr<Peer> &peer : peers)
    if (options.only.empty() || std::count(options.only.begin(), options.only.end(), peer->name())) {
      try {
        peer->anticipate(plan);
      } catch (const PeerSkipped &why) {
        std::fprintf(stderr, "lanejit bench: %s skipped: %s\n", peer->name().c_str(), why.what());
      }
    }
  Progress progress(options.cases.size(), options.progress);
  context.progress = [&](const VisitProgress &p) { progress.visit(p); };

  for (size_t i = 0; i < options.cases.size(); ++i) {
    progress.startCase(i, options.cases[i].id);
    record.cases.push_back(runCase(options.cases[i], context));
    if (options.compile_times)
      record.cases.back().compile_times =
          measureCompileTimes(options.cases[i].program, context.configs.front().options);
    progress.endCase();
  }
  progress.done();

  // The features LLVM compiled for, from the first kernel's report.
  Kernel first = compile(options.cases.front().program, context.configs.front().options);
  record.environment.cpu_features = first.report().features;
  record.environment.load_after = loadAverage();
  // Everything that ran: the peers' modules and every shared object mapped
  // into this process by now (libLLVM, libtorch, oneDNN, libc, ...).
  std::vector<std::string> modules = peerModules();
  // (Not the peers' files in the bundle: the bundle hashes those itself.)
  const std::string staged = bundle.staging().string() + "/";
  for (const std::string &object : loadedSharedObjects())
    if (object.rfind(staged, 0) != 0 &&
        std::find(modules.begin(), modules.end(), object) == modules.end())
      modules.push_back(object);
  for (const std::string &module : modules)
    record.environment.binaries.push_back({module, sha256File(module)});
  writeBundle(record, bundle.staging());
  bundle.commit();
  result.bundle_dir = bundle.path();
  return result;
}

int benchCommand(const BenchOptions &options) {
  BenchResult result = runBench(options);
  if (options.print_table) {
    std::printf("%s\n%s", consoleTable(result.record).c_str(), reportNotes(result.record).c_str());
    if (std::string seed = seedTable(result.record); !seed.empty())
      std::printf("\nThe seed's layout (off = fusion off, on = lanejit; the last column is the "
                  "seed's published M1 Max result, not measured here):\n%s",
                  seed.c_str());
    std::printf("full table: %s\n", (result.bundle_dir / "report.md").string().c_str());
    std::printf("bundle: %s\n", result.bundle_dir.string().c_str());
    std::fflush(stdout);
  }
  return result.record.passed() ? 0 : 1;
}

} // namespace lanejit::bench
