// bench/runner.h — `lanejit bench`: every case through the protocol, the
// evidence bundle written, the table printed.
#pragma once

#include "cases.h"
#include "protocol.h"
#include "records.h"

#include <lanejit/options.h>

#include "peers/peer.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lanejit::bench {

struct BenchOptions {
  ProtocolSettings protocol = ProtocolSettings::quick();
  std::vector<CaseSpec> cases = defaultCases();
  std::vector<std::string> only; // variant names to keep; empty = all
  bool aot = false;              // add the AOT-linked entry (always under seed)
  // lanejit-t2 .. lanejit-tN and the peers at those thread counts, N =
  // threads; 0: the CPUs this process may run on (its affinity).
  int threads = 0;
  CompileOptions compile = CompileOptions::fromEnvironment();
  std::filesystem::path out_dir; // empty: out/bench-<UTC timestamp>
  bool print_table = true;       // the table and notes on stdout
  bool progress = true;          // progress lines on stderr
  bool compile_times = true;     // cold/warm/cached compile per case (fresh processes)
  // Where the peers come from (tests substitute their own).
  std::function<std::vector<std::unique_ptr<Peer>>()> make_peers = availablePeers;
};

struct BenchResult {
  BenchRecord record;
  std::filesystem::path bundle_dir;
};

// Runs every case, writes the bundle. Throws Error on setup problems (a bad
// case, an unwritable directory); failed checks are recorded, not thrown.
BenchResult runBench(const BenchOptions &options);

// The command: runBench, then 0 when every visit passed, 1 otherwise.
int benchCommand(const BenchOptions &options);

} // namespace lanejit::bench
