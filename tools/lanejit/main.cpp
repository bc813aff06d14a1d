// lanejit — command-line front end: run a program on .npy files, dump its
// compiled stages, explain what the compiler realized, inspect or AOT-export
// its object, tune it for a shape, run the benchmark and its audit, or show
// and clear the persistent cache. Every failure is one line on stderr,
// "lanejit: error: ...", and exit code 1.
#include "commands.h"
#include "compile_flags.h"

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

using lanejit::cli::CompileFlags;

// Environment first (LANEJIT_*), then the flags given on the command line.
lanejit::CompileOptions optionsFrom(const CompileFlags &flags) {
  return flags.applyTo(lanejit::CompileOptions::fromEnvironment());
}

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
  run->add_option("--threads", run_args.threads,
                  "threads the kernel may use, >= 1 (default: LANEJIT_NUM_THREADS, else the "
                  "CPU affinity count)");

  std::string dump_program, stage = "ir";
  int64_t dump_cols = 0;
  bool dump_rows = false;
  CompileFlags dump_flags;
  CLI::App *dump = app.add_subcommand("dump", "print a program or one of its compiled stages");
  dump->add_option("program", dump_program, "text program file, or lib:NAME")->required();
  dump->add_option("--stage", stage,
                   "text, passes, ir, plan, llvm-unoptimized, llvm, asm, or object (the "
                   "JIT's object disassembled)")
      ->check(CLI::IsMember(
          {"text", "passes", "ir", "plan", "llvm-unoptimized", "llvm", "asm", "object"}));
  dump->add_option("--cols", dump_cols,
                   "llvm-unoptimized, llvm, asm: the packet-local entry specialised for this "
                   "many columns (what run() uses for short rows), not the generic one");
  dump->add_flag("--rows-across-lanes", dump_rows,
                 "with --cols: the rows-across-lanes entry for that C instead");
  dump_flags.add(*dump);

  lanejit::cli::InspectArgs inspect_args;
  CompileFlags inspect_flags;
  CLI::App *inspect =
      app.add_subcommand("inspect", "code metrics per function, read from the compiled object");
  inspect
      ->add_option("program", inspect_args.program,
                   "text program file, lib:NAME, or an object file (NAME.o, NAME.so)")
      ->required();
  inspect->add_flag("--json", inspect_args.json, "machine-readable output");
  inspect->add_option("--diff", inspect_args.diff,
                      "compare with a second compile under these switches, e.g. "
                      "--diff='--lanes 8 --disable-pass cse'");
  inspect->add_flag("--disasm", inspect_args.disassemble, "print the object's disassembly");
  // One name per --function, so a name never swallows the program argument.
  inspect
      ->add_option("--function", inspect_args.functions,
                   "only this function and the parts split off it (NAME.cold, "
                   "NAME._omp_fn.0); repeatable")
      ->allow_extra_args(false);
  inspect_flags.add(*inspect);

  lanejit::cli::AotArgs aot_args;
  CompileFlags aot_flags;
  CLI::App *aot =
      app.add_subcommand("aot", "write the JIT's object and a C header, to link without LLVM");
  aot->add_option("program", aot_args.program, "text program file, or lib:NAME")->required();
  aot->add_option("-o,--output", aot_args.object_path, "object file to write")->required();
  aot->add_option("--header", aot_args.header_path, "C header to write");
  aot_flags.add(*aot);

  std::string explain_program, explain_shape;
  bool explain_json = false;
  CompileFlags explain_flags;
  CLI::App *explain =
      app.add_subcommand("explain", "what the compiler realized for a program (compile report)");
  explain->add_option("program", explain_program, "text program file, or lib:NAME")->required();
  explain->add_flag("--json", explain_json, "the report as JSON");
  explain->add_option("--shape", explain_shape,
                      "ROWSxCOLS: the mapping costs at this C and whether a tune record applies");
  explain_flags.add(*explain);

  std::function<int()> bench = lanejit::cli::addBenchCommand(app);
  std::function<int()> audit = lanejit::cli::addAuditCommand(app);
  std::function<int()> tune = lanejit::cli::addTuneCommand(app);
  std::function<int()> cache = lanejit::cli::addCacheCommand(app);

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
    run_args.options = optionsFrom(run_flags);
    if (run_args.threads)
      run_args.options.threads = run_args.threads;
    lanejit::cli::runCommand(run_args);
    return 0;
  }
  if (*dump) {
    lanejit::cli::dumpCommand(dump_program, stage, optionsFrom(dump_flags), dump_cols, dump_rows);
    return 0;
  }
  if (*explain) {
    lanejit::cli::explainCommand(explain_program, explain_json, optionsFrom(explain_flags),
                                 explain_shape);
    return 0;
  }
  if (*inspect) {
    inspect_args.options = optionsFrom(inspect_flags);
    lanejit::cli::inspectCommand(inspect_args);
    return 0;
  }
  if (*aot) {
    aot_args.options = optionsFrom(aot_flags);
    lanejit::cli::aotCommand(aot_args);
    return 0;
  }
  if (app.got_subcommand("bench"))
    return bench();
  if (app.got_subcommand("audit"))
    return audit();
  if (app.got_subcommand("tune"))
    return tune();
  if (app.got_subcommand("cache"))
    return cache();
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
