// lanejit/bound_call.h — a kernel call with its buffers bound once.
//
//   BoundCall call = kernel.bind(inputs, outputs); // every check happens here
//   for (...) call();                              // the native entry, almost bare
//
// bind() checks what run() checks (shapes, strides, null pointers, column
// ranges, output/output overlap) and decides the alias handling once: an
// input that exactly aliases an output is left to the entry's guards; an
// input that partially overlaps an output is copied before every call (its
// contents may change between calls, its address may not). The call owns
// its workspace, so one BoundCall must not run on two threads at once (copies
// share it; bind again per thread). The buffers must stay valid while the
// BoundCall is used; the kernel's code lives as long as the BoundCall.
#pragma once

#include <lanejit/launch_abi.h>

#include <cstdint>
#include <memory>

namespace lanejit {

class BoundCall {
public:
  BoundCall() = default;
  // Runs the kernel on the bound buffers. A default-constructed BoundCall
  // does nothing.
  void operator()() const {
    if (staged_)
      stage();
    for (int64_t r = 0; r < rows_; r += block_)
      entry_(&args_, r, r + block_ < rows_ ? r + block_ : rows_);
  }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return args_.cols; }

private:
  friend class Kernel;
  void stage() const; // copies the partially overlapping inputs

  lanejit_entry_fn entry_ = nullptr;
  lanejit_launch_args args_{};
  int64_t rows_ = 0;
  int64_t block_ = 1;
  bool staged_ = false;
  std::shared_ptr<void> state_; // argument arrays, workspace, copies, code
};

} // namespace lanejit
