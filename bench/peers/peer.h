// bench/peers/peer.h — the benchmark's non-lanejit variants ("peers") and
// the memory roofline, behind one small interface so the runner never knows
// which libraries were present at build time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lanejit::bench {

// One case's buffers as the runner allocated them: 64-byte aligned, dense
// rows (row stride == cols for [R,C] tensors, C/2 for RoPE's cos/sin), in the
// library program's declaration order. Already filled and touched once.
struct CaseBuffers {
  std::string op; // library::Entry name: rope, layernorm, swiglu, rmsnorm,
                  // gelu_residual, masked_softmax
  int64_t rows = 0, cols = 0;
  std::vector<const float *> inputs;
  std::vector<float *> outputs;
};

// Everything a peer sets up (tensors wrapping the buffers, oneDNN
// primitives, ...) happens in prepare(), outside timing; call() runs the op
// once, writing the case's outputs.
class PreparedPeer {
public:
  virtual ~PreparedPeer() = default;
  virtual void call() = 0;
};

class Peer {
public:
  virtual ~Peer() = default;
  virtual std::string name() const = 0;        // short id: naive, avx512, torch, onednn
  virtual std::string description() const = 0; // how it runs, for the bundle
  virtual bool supports(const std::string &op) const = 0;
  virtual std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &buffers) const = 0;
};

// The peers this binary was built with, in a fixed order.
std::vector<std::unique_ptr<Peer>> availablePeers();

// The roofline: bytes a case must move per call (every input read once,
// every output written once), and single-thread bandwidth measured now at
// that footprint.
int64_t bytesMoved(const std::string &op, int64_t rows, int64_t cols);
struct Bandwidth {
  double copy_bytes_per_s = 0;  // a[i] = b[i]; counts read + write bytes
  double triad_bytes_per_s = 0; // a[i] = b[i] + s*c[i]; counts 3 streams
};
Bandwidth measureBandwidth(int64_t footprint_bytes, double seconds_budget);

} // namespace lanejit::bench
