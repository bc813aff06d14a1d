// lanejit — command-line front end: run a program on .npy files, dump its
// compiled stages, or run the benchmark. Every failure is one line on stderr,
// "lanejit: error: ...", and exit code 1.
#include "commands.h"

#include <lanejit/error.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace {

int fail(std::string message) {
  // Some messages (verifier lists) span lines; the contract is one line.
  for (char &c : message)
    if (c == '\n')
      c = ';';
  std::fprintf(stderr, "lanejit: error: %s\n", message.c_str());
  return 1;
}

// --lanes and --no-spec, shared by the subcommands that compile.
struct CompileFlags {
  int lanes = 0;
  bool no_spec = false;
  CLI::Option *lanes_option = nullptr;

  void add(CLI::App &app) {
    lanes_option = app.add_option("--lanes", lanes, "lanes per packet (4, 8, 16; 0 = widest)");
    app.add_flag("--no-spec", no_spec, "no full-packet specialization: every packet masked");
  }
  // Environment first (LANEJIT_*), then the flags given on the command line.
  lanejit::CompileOptions options() const {
    lanejit::CompileOptions options = lanejit::CompileOptions::fromEnvironment();
    if (lanes_option->count())
      options.lanes = lanes;
    if (no_spec)
      options.specialize_full_packets = false;
    return options;
  }
};

int runMain(int argc, char **argv) {
  CLI::App app{"lanejit: a JIT compiler for row programs"};
  app.require_subcommand(1);

  lanejit::cli::RunArgs run_args;
  CompileFlags run_flags;
  CLI::App *run = app.add_subcommand("run", "run a program on .npy inputs, write .npy outputs");
  run->add_option("program", run_args.program, "text program file, or lib:NAME")->required();
  run->add_option("--in", run_args.inputs, "NAME=FILE.npy, once per input")
      ->allow_extra_args(false) // one value per flag, so PROGRAM may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--out", run_args.outputs, "NAME=FILE.npy, once per output")
      ->allow_extra_args(false) // one value per flag, so PROGRAM may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run_flags.add(*run);

  std::string dump_program, stage = "ir";
  CompileFlags dump_flags;
  CLI::App *dump = app.add_subcommand("dump", "print a program or one of its compiled stages");
  dump->add_option("program", dump_program, "text program file, or lib:NAME")->required();
  dump->add_option("--stage", stage, "text, ir, llvm or asm")
      ->check(CLI::IsMember({"text", "ir", "llvm", "asm"}));
  dump_flags.add(*dump);

  std::function<int()> bench = lanejit::cli::addBenchCommand(app);
  std::function<int()> audit = lanejit::cli::addAuditCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return fail(e.what());
  }

  if (*run) {
    run_args.options = run_flags.options();
    lanejit::cli::runCommand(run_args);
    return 0;
  }
  if (*dump) {
    lanejit::cli::dumpCommand(dump_program, stage, dump_flags.options());
    return 0;
  }
  if (app.got_subcommand("bench"))
    return bench();
  if (app.got_subcommand("audit"))
    return audit();
  return fail("no subcommand ran");
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runMain(argc, argv);
  } catch (const lanejit::Error &e) {
    return fail(e.what());
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}
