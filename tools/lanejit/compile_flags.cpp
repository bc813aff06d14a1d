#include "compile_flags.h"

#include <lanejit/error.h>

#include <CLI/CLI.hpp>

namespace lanejit::cli {

void CompileFlags::add(CLI::App &app) {
  auto repeatable = [&](const char *flag, std::vector<std::string> &into, const char *help) {
    app.add_option(flag, into, help)
        ->allow_extra_args(false) // one value per flag, so PROGRAM may follow
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  lanes_option_ = app.add_option("--lanes", lanes_, "lanes per packet (4, 8, 16; 0 = widest)");
  opt_level_option_ = app.add_option("--opt-level", opt_level_, "LLVM optimisation level, 0-3");
  block_rows_option_ = app.add_option("--block-rows", block_rows_, "rows per block of work");
  triple_option_ = app.add_option("--target", target_triple_,
                                  "compile for this triple: aarch64-linux-gnu (default: the host)");
  cpu_option_ = app.add_option("--target-cpu", target_cpu_,
                               "compile for this LLVM CPU (x86-64-v3, znver4; apple-m1, ...)");
  features_option_ = app.add_option("--target-features", target_features_,
                                    "LLVM CPU feature overrides, e.g. -avx512f");
  repeatable("--enable", enable_, "turn a switch on, e.g. FUSE_POINTWISE (repeatable)");
  repeatable("--disable", disable_, "turn a switch off; disable wins (repeatable)");
  repeatable("--disable-pass", disabled_passes_, "skip a pass by name, e.g. cse (repeatable)");
}

CompileOptions CompileFlags::applyTo(CompileOptions o) const {
  if (lanes_option_->count())
    o.lanes = lanes_;
  if (opt_level_option_->count())
    o.opt_level = opt_level_;
  if (block_rows_option_->count())
    o.block_rows = block_rows_;
  if (triple_option_->count())
    o.target_triple = target_triple_;
  if (cpu_option_->count())
    o.target_cpu = target_cpu_;
  if (features_option_->count())
    o.target_features = target_features_;
  for (const std::string &name : enable_)
    o.setSwitch(name, true); // throws naming the known switches
  for (const std::string &name : disable_)
    o.setSwitch(name, false);
  o.disabled_passes.insert(o.disabled_passes.end(), disabled_passes_.begin(),
                           disabled_passes_.end());
  return o;
}

CompileOptions applySwitches(CompileOptions base, const std::string &switches) {
  CLI::App app{"switches"};
  CompileFlags flags;
  flags.add(app);
  try {
    app.parse(switches, /*program_name_included=*/false);
  } catch (const CLI::ParseError &e) {
    throw Error(Error::Kind::Bind, "--diff: " + std::string(e.what()));
  }
  return flags.applyTo(std::move(base));
}

} // namespace lanejit::cli
