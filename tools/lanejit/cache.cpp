// `lanejit cache [--clear]`: the persistent cache's folder, what lanejit
// keeps there and its size cap; --clear removes lanejit's files from it
// (cache/cache_bound.h says which), nothing else.
#include "commands.h"

#include "cache/cache_bound.h"
#include "cache/persistent_cache.h"

#include <lanejit/error.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <memory>

namespace lanejit::cli {
namespace {

std::string sized(uint64_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  for (; value >= 1024 && unit < 3; ++unit)
    value /= 1024;
  return fmt::format("{:.1f} {}", value, units[unit]);
}

void cacheCommand(bool clear) {
  std::string dir = persistent::folder();
  if (dir.empty())
    throw Error(Error::Kind::Bind,
                "the persistent cache has no folder: neither XDG_CACHE_HOME nor HOME is set");
  if (clear) {
    persistent::Usage removed = persistent::clear(dir);
    fmt::print("cleared {}: removed {} objects, {} tune records, {} temporaries ({})\n", dir,
               removed.objects, removed.tune_records, removed.temporaries, sized(removed.bytes));
    if (removed.foreign)
      fmt::print("other files: {} (not lanejit's: left)\n", removed.foreign);
    return;
  }
  bool on = !persistent::directory().empty();
  persistent::Usage u = persistent::usage(dir);
  persistent::Cap cap = persistent::capFromEnvironment();
  fmt::print("folder: {}{}\n", dir, on ? "" : " (the cache is off: LANEJIT_CACHE)");
  fmt::print("entries: {} objects, {} tune records, {} temporaries\n", u.objects, u.tune_records,
             u.temporaries);
  fmt::print("size: {} on disk ({} bytes)\n", sized(u.bytes), u.bytes);
  if (cap.bytes == 0)
    fmt::print("cap: none (LANEJIT_CACHE_MAX_MB=0)\n");
  else
    fmt::print("cap: {} ({}); when passed, least recently used files go until {} is left\n",
               sized(cap.bytes), cap.from_environment ? "LANEJIT_CACHE_MAX_MB" : "the default",
               sized(persistent::lowWater(cap.bytes)));
  if (!cap.ignored.empty())
    fmt::print("LANEJIT_CACHE_MAX_MB='{}' ignored: not a number of MiB (0 means no cap)\n",
               cap.ignored);
  if (u.foreign)
    fmt::print("other files: {} (not lanejit's: never counted or removed)\n", u.foreign);
}

} // namespace

std::function<int()> addCacheCommand(CLI::App &app) {
  auto clear = std::make_shared<bool>(false);
  CLI::App *cache = app.add_subcommand(
      "cache", "the persistent cache's folder, its entries, size and cap (LANEJIT_CACHE_MAX_MB)");
  cache->add_flag("--clear", *clear,
                  "remove lanejit's files from the folder (objects, tune records, temporaries)");
  return [clear] {
    cacheCommand(*clear);
    return 0;
  };
}

} // namespace lanejit::cli
