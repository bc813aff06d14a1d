// `lanejit tune PROGRAM --shape RxC`: measure the configurations that give
// the same bits for one shape, print them, record the fastest
// (lanejit/tune.h).
#include "commands.h"
#include "compile_flags.h"

#include <lanejit/error.h>
#include <lanejit/tune.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace lanejit::cli {
namespace {

struct TuneArgs {
  std::string program, shape;
  double budget_ms = 1500;
  int threads = 1;
  CompileFlags flags;
};

void tuneCommand(const TuneArgs &args) {
  if (!(args.budget_ms > 0))
    throw Error(Error::Kind::Bind, "--budget-ms must be positive");
  Program program = loadProgram(args.program);
  TuneShape shape = TuneShape::parse(args.shape);
  CompileOptions options = args.flags.applyTo(CompileOptions::fromEnvironment());
  // A record that would have applied, or why one was ignored.
  TunedRecord before = findTuned(program, shape, options);
  if (before.found)
    fmt::print("before: {}\n", before.message);
  TuneSettings settings;
  settings.budget_ms = args.budget_ms;
  settings.threads = args.threads;
  fmt::print("{}", tune(program, shape, options, settings).text());
}

} // namespace

std::function<int()> addTuneCommand(CLI::App &app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App *tune = app.add_subcommand(
      "tune", "measure same-bits configurations for one shape and record the fastest");
  tune->add_option("program", args->program, "text program file, or lib:NAME")->required();
  tune->add_option("--shape", args->shape, "ROWSxCOLS, e.g. 4096x64")->required();
  tune->add_option("--budget-ms", args->budget_ms,
                   "wall time for compiling and measuring (default 1500)");
  tune->add_option("--threads", args->threads, "threads per call while measuring (default 1)");
  args->flags.add(*tune);
  return [args] {
    tuneCommand(*args);
    return 0;
  };
}

} // namespace lanejit::cli
