// lanejit_compile_probe PROGRAM_FILE OPTIONS_KEY: compiles the program twice
// in this fresh process and prints
//   first_ms=<ms> disk_hit=<0|1> again_ms=<ms>
// first: the process's first compile (LLVM's start-up included; from the
// persistent cache when it has the kernel), again: the same program under
// another name (a new key: LLVM runs, already started). The bench runs it
// with an empty cache and then with the one the first run filled
// (bench/compile_times.h).
#include <lanejit/kernel.h>
#include <lanejit/text.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>

int main(int argc, char **argv) {
  using namespace lanejit;
  if (argc != 3) {
    std::fprintf(stderr, "usage: lanejit_compile_probe PROGRAM_FILE OPTIONS_KEY\n");
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    Program program = parse(text.str(), argv[1]);
    CompileOptions options = CompileOptions::fromKey(argv[2]);
    auto timed = [&](const Program &p, bool *disk_hit) {
      auto start = std::chrono::steady_clock::now();
      Kernel kernel = compile(p, options);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (disk_hit)
        *disk_hit = kernel.report().disk_cache_hit;
      return ms;
    };
    bool disk_hit = false;
    double first = timed(program, &disk_hit);
    program.name += "_again";
    double again = timed(program, nullptr);
    std::printf("first_ms=%.4f disk_hit=%d again_ms=%.4f\n", first, disk_hit ? 1 : 0, again);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lanejit_compile_probe: %s\n", e.what());
    return 1;
  }
}
