// The `avx512-rows` peer: the rows-across-lanes kernels of
// avx512_rows_kernels.cpp behind the Peer interface, the expert bar for the
// narrow-row cases (--cases narrow) where the row-wise `avx512` peer is
// used outside its design. Compiled without AVX-512 flags; supports()
// checks the CPU at run time, like the avx512 peer.
#include "peers/avx512_rows_kernels.h"
#include "peers/peer_factories.h"

namespace lanejit::bench {
namespace {

RowsFunction kernelFor(const std::string &op) {
  if (op == "layernorm")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512_rows::layerNorm(in[0], in[1], in[2], y, r, c);
    };
  if (op == "rmsnorm")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512_rows::rmsNorm(in[0], in[1], y, r, c);
    };
  if (op == "masked_softmax")
    return [](const float *const *in, float *y, int64_t r, int64_t c) {
      avx512_rows::maskedSoftmax(in[0], y, r, c);
    };
  return nullptr;
}

class Avx512RowsPeer : public Peer {
public:
  std::string name() const override { return "avx512-rows"; }
  std::string description() const override {
    return "hand-written AVX-512 intrinsics for narrow rows (bench/peers/avx512_rows_kernels.cpp): "
           "masked softmax, RMSNorm, LayerNorm with rows across lanes for C <= 64 and >= 8 rows "
           "(16 rows per block; packets loaded as rows lie, expand loads/compress stores when C "
           "is not a power of two, reduced by a shuffle transpose into one lane per row; one "
           "vector sqrt/divide per 16 rows; masked row tails), else the avx512 peer's row-wise "
           "kernels; -O3 -mavx512f -mavx512vl -mavx512dq -mfma; runs only on CPUs with "
           "AVX-512F/DQ/VL";
  }
  bool supports(const std::string &op) const override {
    static const bool cpu_ok = cpuHasAvx512();
    return cpu_ok && kernelFor(op) != nullptr;
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    return prepareFunction(kernelFor(b.op), b);
  }
};

} // namespace

std::unique_ptr<Peer> makeAvx512RowsPeer() {
  return std::make_unique<Avx512RowsPeer>();
}

} // namespace lanejit::bench
