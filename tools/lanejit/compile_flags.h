// The compile switches of every subcommand that compiles, and of
// `inspect --diff`'s second setting: one flag list, one parser (CLI11).
// Switch and pass names are those of src/options/switches.def (docs/switches.md).
#pragma once

#include <lanejit/options.h>

#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace lanejit::cli {

class CompileFlags {
public:
  // Adds --lanes, --opt-level, --block-rows, --target-cpu, --target-features,
  // --enable/--disable SWITCH and --disable-pass PASS to `app`.
  void add(CLI::App &app);
  // `base` with the flags given on the command line applied over it.
  CompileOptions applyTo(CompileOptions base) const;

private:
  int lanes_ = 0, opt_level_ = 0, block_rows_ = 0;
  std::string target_triple_, target_cpu_, target_features_;
  std::vector<std::string> enable_, disable_, disabled_passes_;
  CLI::Option *lanes_option_ = nullptr, *opt_level_option_ = nullptr, *block_rows_option_ = nullptr,
              *triple_option_ = nullptr, *cpu_option_ = nullptr, *features_option_ = nullptr;
};

// Applies switches written as on the command line ("--lanes=8 --disable
// SPECIALIZE_FULL_PACKETS") over `base`, with the same parser; throws Error
// naming an unknown flag or switch.
CompileOptions applySwitches(CompileOptions base, const std::string &switches);

} // namespace lanejit::cli
