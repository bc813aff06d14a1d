// The issue-width table (bench/issue_width.h). Widths are the allocate/
// rename (AMD: dispatch) widths in the vendors' optimization manuals:
// Intel's (Skylake 4; Sunny/Willow/Cypress Cove 5; Golden/Raptor/Redwood
// Cove 6) and AMD's Software Optimization Guides for family 17h and 19h
// (6 macro-ops dispatched per cycle).
#include "issue_width.h"

#include "io/read_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace lanejit::bench {
namespace {

constexpr int kWidest = 6;

struct Core {
  const char *vendor;
  int family;
  std::initializer_list<int> models;
  const char *name;
  int width;
};

const Core kCores[] = {
    {"GenuineIntel", 6, {78, 85, 94, 142, 158, 165, 166}, "Skylake family", 4},
    {"GenuineIntel", 6, {106, 108, 125, 126, 140, 141, 167}, "Ice/Tiger/Rocket Lake", 5},
    {"GenuineIntel", 6, {143, 151, 154, 183, 186, 191, 207, 173, 174},
     "Golden Cove or later (Sapphire/Emerald/Granite Rapids, Alder/Raptor Lake)", 6},
    {"AuthenticAMD", 23, {}, "Zen/Zen 2 (family 17h)", 6},
    {"AuthenticAMD", 25, {}, "Zen 3/Zen 4 (family 19h)", 6},
};

// The first value of `key` in cpuinfo text ("" when absent).
std::string field(const std::string &cpuinfo, const std::string &key) {
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name == key)
      return line.substr(std::min(line.size(), colon + 2));
  }
  return "";
}

bool hasFlag(const std::string &flags, const std::string &flag) {
  return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
}

} // namespace

IssueWidth issueWidthFromCpuinfo(const std::string &cpuinfo) {
  std::string vendor = field(cpuinfo, "vendor_id"), flags = field(cpuinfo, "flags");
  int family = std::atoi(field(cpuinfo, "cpu family").c_str());
  int model = std::atoi(field(cpuinfo, "model").c_str());
  std::string id = fmt::format("{} family {} model {}", vendor, family, model);
  for (const Core &core : kCores) {
    bool any_model = core.models.size() == 0;
    if (vendor != core.vendor || family != core.family ||
        (!any_model && std::find(core.models.begin(), core.models.end(), model) ==
                           core.models.end()))
      continue;
    // AMX and AVX512-FP16 exist only from Golden Cove on: a narrower model
    // number beside them is a hypervisor's, and the wider width keeps the
    // bound low.
    if (core.width < 6 && (hasFlag(flags, "amx_tile") || hasFlag(flags, "avx512_fp16")))
      return {6, fmt::format("{}: the table says {} ({}), but the flags amx_tile/avx512_fp16 "
                             "exist only from Golden Cove (6-wide allocation), so 6",
                             id, core.name, core.width)};
    return {core.width, fmt::format("{}: {}, {}-wide (vendor optimization manual)", id,
                                    core.name, core.width)};
  }
  return {kWidest, fmt::format("{}: not in the table; {} (the widest in it, so the bound "
                               "stays a lower bound)",
                               id, kWidest)};
}

IssueWidth issueWidth() {
  std::string text;
  try {
    text = io::readUserFile("/proc/cpuinfo");
  } catch (...) {
    // No cpuinfo: the unknown core's width.
  }
  return issueWidthFromCpuinfo(text);
}

} // namespace lanejit::bench
