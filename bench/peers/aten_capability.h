// bench/peers/aten_capability.h — choosing ATEN_CPU_CAPABILITY for the torch
// peer. ATen reads the variable once, at its first dispatch, so the choice
// is measured in child processes (lanejit_aten_probe, built from
// aten_probe.cpp) and set before this process makes any ATen call.
#pragma once

#include <string>

namespace lanejit::bench {

struct AtenChoice {
  std::string how;      // "user", "probe", "no avx512" or "probe failed"
  std::string detail;   // user's value, or why there was no choice
  std::string own_name; // what ATen picks by itself ("AVX2"), per the probe
  std::string avx512_name;
  double own_ms = 0; // probe's SwiGLU 1024x4097, best median ms per call
  double avx512_ms = 0;
  bool set_avx512 = false; // this process now runs with ATEN_CPU_CAPABILITY=avx512
};

// Runs once per process (thread-safe); later calls return the same choice.
// If the user set ATEN_CPU_CAPABILITY, it is left alone and no probe runs.
const AtenChoice &chooseAtenCapability();

// The "CPU capability usage: X" value from at::show_config() text, or "".
std::string capabilityFromConfig(const std::string &show_config);

} // namespace lanejit::bench
