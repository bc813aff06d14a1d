// A workspace carved from a growing buffer, aligned as the native entry
// needs (LANEJIT_WORKSPACE_ALIGN_BYTES): the run() arena, the pool workers',
// the column split's and the Python fast path's. The buffer grows once and
// is reused, so steady-state calls allocate nothing.
#pragma once

#include <lanejit/launch_abi.h>

#include <cstdint>
#include <vector>

namespace lanejit::launch {

inline float *alignedWorkspace(std::vector<float> &storage, int64_t floats) {
  constexpr uintptr_t align = LANEJIT_WORKSPACE_ALIGN_BYTES;
  size_t need = static_cast<size_t>(floats) + align / sizeof(float);
  if (storage.size() < need)
    storage.resize(need);
  auto p = reinterpret_cast<uintptr_t>(storage.data());
  return reinterpret_cast<float *>((p + align - 1) & ~(align - 1));
}

} // namespace lanejit::launch
