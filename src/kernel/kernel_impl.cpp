// A kernel's making: the driver's code behind a Kernel::Impl, and its
// column-split entry on first use.
#include "kernel/kernel_impl.h"

#include <lanejit/error.h>

#include <atomic>

namespace lanejit {

uint64_t nextSerial() {
  static std::atomic<uint64_t> serial{1};
  return serial++;
}

std::shared_ptr<Kernel::Impl> compileImpl(const Program &program, const CompileOptions &options) {
  if (options.threads)
    launch::checkThreadCount(*options.threads, "CompileOptions::threads", Error::Kind::Compile);
  driver::CodeLookup found = driver::compiledCode(program, options);
  auto impl = std::make_shared<Kernel::Impl>();
  impl->program = program;
  impl->options = options;
  impl->code = found.code;
  impl->report = found.code->report;
  impl->report.mapping.block_rows = options.block_rows; // not part of the cache key
  if (found.cache_hit) {
    impl->report.cache_hit = true;
    impl->report.compile_ms = 0;
  }
  return impl;
}

lower::NativePartEntry Kernel::Impl::partEntry() const {
  const Kernel::Impl &k = *this;
  const CompiledCode &code = *k.code;
  if (!k.options.column_split || !code.cannot_run_here.empty())
    return nullptr;
  std::call_once(code.part_once, [&] {
    try {
      backend::NativePart part = driver::compilePartEntry(k.program, k.options);
      code.part_lifetime = std::move(part.lifetime);
      code.part.store(part.part, std::memory_order_release);
    } catch (const Error &) {
      // No column split for this kernel: its calls split rows only.
    }
  });
  return code.part.load(std::memory_order_acquire);
}

} // namespace lanejit
