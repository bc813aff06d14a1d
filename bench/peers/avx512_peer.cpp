// The `avx512` peer: the hand-written kernels of avx512_kernels.cpp behind
// the Peer interface. Compiled without AVX-512 flags; supports() checks the
// CPU at run time, so a binary built here still runs (without this peer's
// cases) on a CPU lacking AVX-512.
#include "peers/avx512_bf16_kernels.h"
#include "peers/avx512_kernels.h"
#include "peers/peer_factories.h"

namespace lanejit::bench {
namespace {

using Kernel = RowsFunction;

Kernel kernelFor(const std::string &op) {
  if (op == "rope")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::rope(in[0], in[1], in[2], y, r, c);
    };
  if (op == "layernorm")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::layerNorm(in[0], in[1], in[2], y, r, c);
    };
  if (op == "swiglu")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::swiglu(in[0], in[1], y, r, c);
    };
  if (op == "rmsnorm")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::rmsNorm(in[0], in[1], y, r, c);
    };
  if (op == "gelu_residual")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::geluResidual(in[0], in[1], y, r, c);
    };
  if (op == "masked_softmax")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512::maskedSoftmax(in[0], y, r, c);
    };
  return nullptr;
}

// The bf16 kernels (RMSNorm and masked softmax): the case's buffers hold
// bf16 patterns.
class Bf16Prepared : public PreparedPeer {
public:
  explicit Bf16Prepared(const CaseBuffers &b) : b_(b) {}
  void call() override {
    auto in = [&](size_t i) { return static_cast<const uint16_t *>(b_.inputs[i]); };
    auto *y = static_cast<uint16_t *>(b_.outputs[0]);
    if (b_.op == "rmsnorm")
      avx512::rmsNormBF16(in(0), in(1), y, b_.rows, b_.cols);
    else
      avx512::maskedSoftmaxBF16(in(0), y, b_.rows, b_.cols);
  }

private:
  CaseBuffers b_;
};

bool cpuHasAvx512Bw() {
  __builtin_cpu_init();
  return cpuHasAvx512() && __builtin_cpu_supports("avx512bw");
}

class Avx512Peer : public Peer {
public:
  std::string name() const override { return "avx512"; }
  std::string description() const override {
    return "hand-written AVX-512 intrinsics (bench/peers/avx512_kernels.cpp): 16 lanes, "
           "masked tail loads/stores, FMA, degree-6 polynomial exp (SiLU, softmax; tanh via "
           "exp), two-pass LayerNorm, one accumulator per reduction; -O3 -mavx512f "
           "-mavx512vl -mavx512dq -mfma; runs only on CPUs with AVX-512F/DQ/VL. bf16 "
           "(bench/peers/avx512_bf16_kernels.cpp): RMSNorm and masked softmax, widened to f32 "
           "per packet, rounded to nearest-even once per stored element, softmax's exp "
           "recomputed in its last pass; also needs AVX-512BW";
  }
  bool supports(const std::string &op) const override {
    static const bool cpu_ok = cpuHasAvx512();
    return cpu_ok && kernelFor(op) != nullptr;
  }
  bool runs(const std::string &op, const std::string &dtype) const override {
    static const bool bw = cpuHasAvx512Bw();
    if (dtype == "bf16")
      return bw && (op == "rmsnorm" || op == "masked_softmax");
    return dtype == "f32" && supports(op);
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    if (b.dtype == "bf16")
      return std::make_unique<Bf16Prepared>(b);
    return prepareFunction(kernelFor(b.op), b);
  }
};

} // namespace

bool cpuHasAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

std::unique_ptr<Peer> makeAvx512Peer() {
  return std::make_unique<Avx512Peer>();
}

} // namespace lanejit::bench
