// lanejit/options.h — every switch of the compiler, in one struct.
//
// Each field has an environment variable (docs/switches.md lists them all);
// fromEnvironment() applies them over a base. For booleans,
// LANEJIT_ENABLE_<X>=1 turns a switch on and LANEJIT_DISABLE_<X>=1 turns it
// off; when both are set, disable wins. No switch changes an output bit.
#pragma once

#include <string>
#include <vector>

namespace lanejit {

struct CompileOptions {
  // Lanes per packet (4, 8 or 16 for f32); 0 picks the widest the target has.
  int lanes = 0;
  // Full packets run a body compiled with the constant all-on mask; only the
  // tail runs the masked body. Off: every packet runs the masked body.
  bool specialize_full_packets = true;
  // Rows per block, the unit of work handed to a thread.
  int block_rows = 32;
  // LLVM optimisation level for the JIT's pass pipeline (0-3).
  int opt_level = 2;
  // Passes (by name, see docs/switches.md) to skip.
  std::vector<std::string> disabled_passes;
  // Print the IR after every pass that changed it, and pass timings, to stderr.
  bool dump_passes = false;
  bool time_passes = false;
  // Target: CPU features as LLVM spells them ("+avx2,+fma,..."); empty means
  // the host's, detected at run time.
  std::string target_features;

  // Applies LANEJIT_* environment variables over `base`; throws Error on a
  // malformed value.
  static CompileOptions fromEnvironment(CompileOptions base);
  static CompileOptions fromEnvironment();
  // A stable, complete text form (part of the kernel cache key).
  std::string key() const;
};

} // namespace lanejit
