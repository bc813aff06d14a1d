// The `naive` peer: bench/naive_loops.cpp (plain loops, -O3 -march=native,
// no fast-math) behind the Peer interface. No setup; call() is one loop nest.
#include "peers/peer_factories.h"

#include "naive_loops.h"

namespace lanejit::bench {
namespace {

class NaivePeer : public Peer {
public:
  std::string name() const override { return "naive"; }
  std::string description() const override {
    return "plain C++ loops (bench/naive_loops.cpp): the formulas as written, float "
           "accumulators, std::exp/std::tanh/std::sqrt (rmsnorm_q8: y recomputed in the "
           "max|y| and the quantizing pass, std::nearbyint, clamped to +-127; rmsnorm_q8_0 the "
           "same per block of 32, its scale cast to _Float16); g++ -O3 "
           "-march=native, no fast-math";
  }
  bool supports(const std::string &op) const override { return naiveOp(op) != nullptr; }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    return std::make_unique<Prepared>(naiveOp(b.op)->fn, b);
  }

private:
  // The loop over the case's buffers (f32: requireRunnable checked it).
  class Prepared : public PreparedPeer {
  public:
    Prepared(NaiveFn fn, const CaseBuffers &b)
        : fn_(fn), outputs_(b.outputs), rows_(b.rows), cols_(b.cols) {
      for (const void *p : b.inputs)
        inputs_.push_back(static_cast<const float *>(p));
    }
    void call() override { fn_(inputs_.data(), outputs_.data(), rows_, cols_); }

  private:
    NaiveFn fn_;
    std::vector<const float *> inputs_;
    std::vector<void *> outputs_;
    int64_t rows_, cols_;
  };
};

} // namespace

std::unique_ptr<Peer> makeNaivePeer() {
  return std::make_unique<NaivePeer>();
}

} // namespace lanejit::bench
