// tests/support/entry_args.h — a case's buffers as a native entry's
// argument block, for tests that call an entry themselves (the pool's
// runEntry, the object loader, an AOT-linked entry).
//
//   test::EntryArgs e(kernel, c);
//   entry(&e.args, 0, c.shape.rows);
// Header-only.
#pragma once

#include <lanejit/check.h>
#include <lanejit/kernel.h>

#include <cstdint>
#include <vector>

namespace lanejit::test {

// The inputs', then the outputs', data and row strides, and a 64-byte
// aligned workspace of the size `k` asks for at the case's C.
struct EntryArgs {
  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  std::vector<float> ws;
  LaunchArgs args;
  EntryArgs(const Kernel &k, check::Case &c) {
    for (auto *list : {&c.inputs, &c.outputs})
      for (check::GuardedBuffer &b : *list) {
        buffers.push_back(b.data());
        strides.push_back(b.rowStride());
      }
    ws.resize(k.workspaceFloats(c.shape.cols) + 16);
    float *aligned =
        reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t(63));
    args = LaunchArgs{buffers.data(), strides.data(), c.shape.rows, c.shape.cols, aligned};
  }
};

} // namespace lanejit::test
