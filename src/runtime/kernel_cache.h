// The kernel cache: LRU by bytes, one build per key at a time
// (include/lanejit/kernel_cache.h says what users see).
#pragma once

#include "runtime/kernel_impl.h"

#include <lanejit/kernel_cache.h>

#include <functional>
#include <memory>
#include <string>

namespace lanejit {

struct CacheLookup {
  std::shared_ptr<const CompiledCode> code;
  bool hit = false; // true when this call did not build (found or waited)
};

// The cached code for `key`, or what `build` returns (then cached if it
// fits). `build` runs outside the cache's lock; concurrent callers with the
// same key wait for it and get its code, or its exception. A failed build
// caches nothing, so the next call tries again.
CacheLookup cachedOrBuild(const std::string &key,
                          const std::function<std::shared_ptr<const CompiledCode>()> &build);

// A capacity as LANEJIT_KERNEL_CACHE_BYTES spells it: bytes, optionally
// with a K, M or G suffix (KiB, MiB, GiB). Throws Error naming `name`.
size_t parseCacheCapacity(const std::string &name, const std::string &text);

} // namespace lanejit
