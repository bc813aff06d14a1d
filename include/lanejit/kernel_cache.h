// lanejit/kernel_cache.h — the process-wide cache behind compile().
//
// compile() keeps what it built, keyed by the program's text and every
// option that changes code, so compiling the same program again costs a
// lookup. The cache is bounded: when its entries' size passes the capacity,
// the least recently used are dropped (a Kernel that still holds one keeps
// it alive and working; the code is freed with the last holder). Threads
// compiling the same key at once share one compilation: the first builds,
// the others wait for it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lanejit {

struct KernelCacheStats {
  size_t entries = 0;
  size_t bytes = 0;          // approximate: objects, JIT pages, texts kept
  size_t capacity_bytes = 0; // LANEJIT_KERNEL_CACHE_BYTES or setKernelCacheCapacity
  uint64_t hits = 0;         // compile() answered from the cache
  uint64_t waits = 0;        // compile() waited for another thread's build
  uint64_t builds = 0;       // compilations started (a failed one included)
  uint64_t evictions = 0;    // entries dropped to stay within the capacity
  uint64_t live_code = 0;    // compiled kernels alive in the process, cached or not
};

// Default capacity: 64 MiB, or LANEJIT_KERNEL_CACHE_BYTES (bytes, with an
// optional K, M or G suffix for KiB/MiB/GiB) read at the first compile.
// 0 keeps nothing (concurrent compiles of one key still share their build).
void setKernelCacheCapacity(size_t bytes);
KernelCacheStats kernelCacheStats();
// Drops every entry (kernels in use keep theirs).
void clearKernelCache();

} // namespace lanejit
