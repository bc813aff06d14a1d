// bench/environment.h — the machine and build a run happened on.
#pragma once

#include "records.h"

#include <array>

namespace lanejit::bench {

// Everything but the load after the run and the CPU features (which the
// first compiled kernel reports); git is asked about the source tree this
// binary was built from.
EnvironmentRecord captureEnvironment(const std::string &compile_options);
std::array<double, 3> loadAverage(); // zeros when unavailable
// Paths of the shared objects mapped into this process now, sorted.
std::vector<std::string> loadedSharedObjects();

} // namespace lanejit::bench
