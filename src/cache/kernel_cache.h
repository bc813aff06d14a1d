// The kernel cache: LRU by bytes, one build per key at a time
// (include/lanejit/kernel_cache.h says what users see).
#pragma once

#include <lanejit/kernel_cache.h>

#include <cstddef>

#include <functional>
#include <memory>
#include <string>

namespace lanejit {

// What the cache holds: a compile's code (driver/compiled_code.h), which
// counts itself as live while any holder keeps it
// (KernelCacheStats::live_code) and says how much memory it keeps alive.
struct CachedCode {
  CachedCode();
  virtual ~CachedCode();
  CachedCode(const CachedCode &) = delete;
  CachedCode &operator=(const CachedCode &) = delete;
  // Bytes held besides the cache key: objects, JIT pages, texts.
  virtual size_t bytes() const = 0;
};

struct CacheLookup {
  std::shared_ptr<const CachedCode> code;
  bool hit = false; // true when this call did not build (found or waited)
};

// The cached code for `key`, or what `build` returns (then cached if it
// fits). `build` runs outside the cache's lock; concurrent callers with the
// same key wait for it and get its code, or its exception. A failed build
// caches nothing, so the next call tries again.
CacheLookup cachedOrBuild(const std::string &key,
                          const std::function<std::shared_ptr<const CachedCode>()> &build);

// A capacity as LANEJIT_KERNEL_CACHE_BYTES spells it: bytes, optionally
// with a K, M or G suffix (KiB, MiB, GiB). Throws Error naming `name`.
size_t parseCacheCapacity(const std::string &name, const std::string &text);

} // namespace lanejit
