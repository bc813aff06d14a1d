// A checked call of a kernel: what run() and bind() compute from the
// caller's buffers before the entry can be called, and the per-thread
// memory of run()'s last one (so a repeated call skips the checks).
#pragma once

#include "driver/lowered.h"
#include "kernel/kernel_impl.h"

#include <array>
#include <cstdint>
#include <span>

namespace lanejit {

struct PreparedCall {
  Shape shape;
  size_t count = 0; // inputs + outputs
  std::array<void *, kMaxBuffers> buffers{};
  std::array<int64_t, kMaxBuffers> strides{};
  // Inputs that partially overlap an output (bit i: input i) and the bytes
  // to copy for each: the kernel must read a copy taken at every call.
  uint64_t staged = 0;
  std::array<size_t, kMaxBuffers> staged_bytes{};
  int64_t workspace_floats = 0;
  NativeEntry entry = nullptr; // for this call's shape (entryFor)
  bool entry_settled = true;   // false: run() asks entryFor again
};

// Every column offset and count the program uses must be a non-negative
// integer for `cols`: the entry's integer division would silently
// truncate. Column indices are i32 inside the kernel, so each must also
// fit in 31 bits (C does not bound 2*C). Throws Error(Kind::Bind) naming
// the node.
void checkColumnRanges(const CompiledCode &code, int64_t cols);

// Every check of a call (Error(Kind::Bind) or, for code this machine cannot
// run, Kind::Compile) and its argument arrays.
PreparedCall prepareCall(const Kernel::Impl &impl, std::span<const BufferRef> inputs,
                         std::span<const BufferRef> outputs);

// A thread's last checked call of run(): reused when the kernel (by its
// serial number, never reused) and every BufferRef are identical, since the
// checks and the alias decisions depend on nothing else.
class LastCall {
public:
  // Mutable: run() updates the entry once a specialised one is built.
  PreparedCall *find(uint64_t kernel, std::span<const BufferRef> inputs,
                     std::span<const BufferRef> outputs);
  PreparedCall &remember(uint64_t kernel, std::span<const BufferRef> inputs,
                         std::span<const BufferRef> outputs, const PreparedCall &call);

private:
  uint64_t kernel_ = 0; // 0: nothing remembered
  size_t inputs_ = 0, outputs_ = 0;
  std::array<BufferRef, kMaxBuffers> refs_{};
  PreparedCall call_;
};

} // namespace lanejit
