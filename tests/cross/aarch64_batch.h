// tests/cross/aarch64_batch.h — many calls of aarch64 kernel objects, run in
// one process of the cross-built runner (tools/object_run) under
// qemu-aarch64: one qemu start for hundreds of calls.
//
//   test::Aarch64Batch batch(scratch.path());
//   batch.add("rmsnorm W8", arm_kernel, c, /*threads=*/2); // c as before the call
//   ... run the host kernel on c ...
//   ASSERT_TRUE(batch.run(tools));
//   std::string bits = batch.outputBytes(0, 0);
#pragma once

#include <lanejit/check.h>
#include <lanejit/kernel.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lanejit::test {

// What the cross tests need on this machine, from the build
// (cmake/cross_aarch64.cmake); missing() names the first thing absent.
struct CrossTools {
  std::string qemu, sysroot, runner, cc;
  std::string missing() const;
  // `qemu-aarch64 -L SYSROOT` quoted for a shell, ready for a program.
  std::string qemuCommand() const;
};
CrossTools crossTools();

class Aarch64Batch {
public:
  explicit Aarch64Batch(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Queues one call of `arm` (compiled for aarch64) on the case's buffers
  // as they are now: written to .npy files here, so the caller may run the
  // host kernel on `c` next. aliases[o] >= 0 makes output o input
  // aliases[o]'s own buffer (in place; same type, shape and stride).
  void add(const std::string &label, const Kernel &arm, const check::Case &c, int threads,
           const std::vector<int> &aliases = {});
  size_t size() const { return calls_; }

  // Runs every queued call; fails with the runner's messages.
  ::testing::AssertionResult run(const CrossTools &tools) const;

  // The payload bytes (check::GuardedBuffer::bytes() of them) that call
  // `call` left in its output `output`.
  std::string outputBytes(size_t call, size_t output) const;

private:
  std::string objectFile(const Kernel &arm);
  std::string file(size_t call, const std::string &what) const;

  std::filesystem::path dir_;
  std::string manifest_;
  size_t calls_ = 0;
  std::map<std::pair<uint64_t, std::string>, std::string> objects_; // (hash, entry) -> file
  std::vector<std::vector<int64_t>> payloadBytes_;                  // [call][output]
};

// Whether `arm` (bytes the aarch64 run left) equals the host's buffer bit
// for bit; the message names the first differing element and both values.
::testing::AssertionResult sameBits(const check::GuardedBuffer &host, const std::string &arm,
                                    const std::string &what);

} // namespace lanejit::test
