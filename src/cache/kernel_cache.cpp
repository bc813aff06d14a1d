// The kernel cache behind compile(): LRU by approximate bytes, and one
// build per key at a time.
#include "cache/kernel_cache.h"

#include <lanejit/error.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <future>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace lanejit {
namespace {

std::atomic<uint64_t> liveCode{0};

constexpr size_t kDefaultCapacity = size_t{64} << 20;
constexpr const char *kCapacityVariable = "LANEJIT_KERNEL_CACHE_BYTES";

size_t capacityFromEnvironment() {
  const char *v = std::getenv(kCapacityVariable);
  return v && *v ? parseCacheCapacity(kCapacityVariable, v) : kDefaultCapacity;
}

// What an entry keeps alive: the code's bytes and its key.
size_t approximateBytes(const std::string &key, const CachedCode &c) {
  return key.size() + c.bytes();
}

class KernelCache {
public:
  static KernelCache &instance() {
    // Intentionally never destroyed: Kernels in static objects may outlive it.
    static KernelCache *cache = new KernelCache(capacityFromEnvironment());
    return *cache;
  }

  CacheLookup lookupOrBuild(const std::string &key,
                            const std::function<std::shared_ptr<const CachedCode>()> &build) {
    Evicted evicted; // destroyed after the lock is released
    std::unique_lock<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.position);
      ++stats_.hits;
      return {it->second.code, true};
    }
    if (auto it = building_.find(key); it != building_.end()) {
      std::shared_future<std::shared_ptr<const CachedCode>> pending = it->second;
      ++stats_.waits;
      lock.unlock();
      return {pending.get(), true}; // rethrows the builder's error
    }
    std::promise<std::shared_ptr<const CachedCode>> promise;
    building_.emplace(key, promise.get_future().share());
    ++stats_.builds;
    lock.unlock();

    std::shared_ptr<const CachedCode> code;
    try {
      code = build();
    } catch (...) {
      lock.lock();
      building_.erase(key);
      promise.set_exception(std::current_exception());
      throw;
    }
    lock.lock();
    building_.erase(key);
    insert(key, code, evicted);
    promise.set_value(code);
    return {code, false};
  }

  void setCapacity(size_t bytes) {
    Evicted evicted;
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.capacity_bytes = bytes;
    evictDownTo(bytes, evicted);
  }

  void clear() {
    Evicted evicted;
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t evictions = stats_.evictions; // a clear is not an eviction
    evictDownTo(0, evicted);
    stats_.evictions = evictions;
  }

  KernelCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    KernelCacheStats s = stats_;
    s.entries = entries_.size();
    s.live_code = liveCode.load();
    return s;
  }

private:
  // Evicted code is released after the cache's lock: the last release of a
  // kernel's code takes the JIT's lock and frees its pages.
  using Evicted = std::vector<std::shared_ptr<const CachedCode>>;

  struct Entry {
    std::shared_ptr<const CachedCode> code;
    size_t bytes;
    std::list<std::string>::iterator position; // in lru_
  };

  explicit KernelCache(size_t capacity) { stats_.capacity_bytes = capacity; }

  void insert(const std::string &key, const std::shared_ptr<const CachedCode> &code,
              Evicted &evicted) {
    size_t bytes = approximateBytes(key, *code);
    if (bytes > stats_.capacity_bytes)
      return; // would evict everything and still not fit
    evictDownTo(stats_.capacity_bytes - bytes, evicted);
    lru_.push_front(key);
    entries_.emplace(key, Entry{code, bytes, lru_.begin()});
    stats_.bytes += bytes;
  }

  // Drops least recently used entries until at most `bytes` remain; a
  // Kernel still holding one keeps its code.
  void evictDownTo(size_t bytes, Evicted &evicted) {
    while (stats_.bytes > bytes && !lru_.empty()) {
      auto it = entries_.find(lru_.back());
      stats_.bytes -= it->second.bytes;
      evicted.push_back(std::move(it->second.code));
      entries_.erase(it);
      lru_.pop_back();
      ++stats_.evictions;
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_; // most recently used first
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const CachedCode>>>
      building_;
  KernelCacheStats stats_;
};

} // namespace

size_t parseCacheCapacity(const std::string &name, const std::string &text) {
  const char *v = text.c_str();
  char *end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  int shift = 0;
  if (end != v && *end)
    shift = end[1]                       ? -1
            : *end == 'K' || *end == 'k' ? 10
            : *end == 'M' || *end == 'm' ? 20
            : *end == 'G' || *end == 'g' ? 30
                                         : -1;
  bool ok = end != v && std::isdigit(static_cast<unsigned char>(*v)) && errno == 0 && shift >= 0 &&
            n <= (~0ull >> shift);
  if (!ok)
    throw Error(Error::Kind::Compile,
                name + "=" + text + ": expected a byte count, optionally with K, M or G");
  return static_cast<size_t>(n << shift);
}

CachedCode::CachedCode() {
  ++liveCode;
}
CachedCode::~CachedCode() {
  --liveCode;
}

CacheLookup cachedOrBuild(const std::string &key,
                          const std::function<std::shared_ptr<const CachedCode>()> &build) {
  return KernelCache::instance().lookupOrBuild(key, build);
}

void setKernelCacheCapacity(size_t bytes) {
  KernelCache::instance().setCapacity(bytes);
}
KernelCacheStats kernelCacheStats() {
  return KernelCache::instance().stats();
}
void clearKernelCache() {
  KernelCache::instance().clear();
}

} // namespace lanejit
