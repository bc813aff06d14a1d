// bench/issue_width.h — how many µops the core can issue (allocate/rename)
// per cycle, from a table of the x86-64 cores this bench knows, keyed by
// /proc/cpuinfo's vendor, family and model and checked against its flags
// (a hypervisor may report one model and pass through another's features).
// The floor's compute part divides vector µops by it (bench/floor.h).
#pragma once

#include <string>

namespace lanejit::bench {

struct IssueWidth {
  int width = 0;
  std::string source; // the core it took to be and why, for the bundle
};

// From the text of /proc/cpuinfo (its first processor's fields). An unknown
// core gets the widest width in the table, so the bound stays a lower bound.
IssueWidth issueWidthFromCpuinfo(const std::string &cpuinfo);
// The same for this machine.
IssueWidth issueWidth();

} // namespace lanejit::bench
