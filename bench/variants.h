// bench/variants.h — the variants of a case, bound to its buffers.
//
// lanejit variants call the native entry with a LaunchArgs bound once;
// peers (bench/peers/peer.h) are prepared once and called. Everything that
// allocates or compiles happens here, outside timing.
#pragma once

#include "cases.h"
#include "claims.h"
#include "protocol.h"
#include "records.h"

#include <lanejit/check.h>
#include <lanejit/kernel.h>
#include <lanejit/options.h>

#include "peers/peer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lanejit::bench {

struct LanejitConfig {
  std::string name; // "lanejit", "lanejit-nospec", "lanejit-w8"
  std::string description;
  CompileOptions options;
  int lanes = 0;        // the W this configuration asks for (as options.lanes,
                        // or the widest of the target when that is 0)
  bool aot = false;     // time the AOT path: the kernel's object linked by the
                        // system linker and loaded, not the JIT's mapping of it
  int threads = 1;      // > 1: rows split across the pool (Kernel::runEntry)
  bool via_run = false; // time Kernel::run() (its checks, remembered last
                        // call and launch), not the native entry
};

// The widest W an LLVM feature list has (16 with +avx512f, 8 with +avx,
// else 4). Read from the list a kernel was compiled for
// (CompileReport::features), never from the host: the target is what the
// options name (LANEJIT_TARGET_CPU / _FEATURES may not be this machine), and
// the lanes claim then checks the compiler's choice of W against it.
int widestLanes(const std::string &features);
// widestLanes of the target `options` compile for (a one-line program is
// compiled to learn it).
int widestLanes(const CompileOptions &options);

// The default configuration first, then full-packet specialization off and
// fusion off; the seed protocol adds W = 8 when the target is wider, and
// the AOT-linked entry when asked (`aot`) or under the seed protocol, then
// lanejit-t2 ... lanejit-tN for N = `threads` (the default kernel on the
// pool, at most that many threads; the others run on one thread).
std::vector<LanejitConfig> lanejitConfigs(const ProtocolSettings &protocol,
                                          const CompileOptions &base, bool aot = false,
                                          int threads = 1);

struct BoundVariant {
  VariantRecord record;
  std::unique_ptr<Repeatable> callable;
  std::optional<Kernel> kernel; // lanejit: its stats are re-checked every visit
  std::vector<Claim> claims;
  std::vector<PreparedPeer::CodeObject> objects; // peers: the code call() runs
};

// Every lanejit configuration, then every peer (of availablePeers(), kept
// alive by the caller) that supports the case's op, bound to `buffers`. `only` (empty = all) keeps
// just the named variants. Fails with Error when a peer cannot be prepared.
std::vector<BoundVariant> bindVariants(const CaseSpec &spec, check::Case &buffers,
                                       const std::vector<LanejitConfig> &configs,
                                       const std::vector<std::unique_ptr<Peer>> &peers,
                                       const std::vector<std::string> &only);

} // namespace lanejit::bench
