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
           "accumulators, std::exp/std::tanh/std::sqrt; g++ -O3 -march=native, no fast-math";
  }
  bool supports(const std::string &op) const override { return naiveOp(op) != nullptr; }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    return prepareFunction(naiveOp(b.op)->fn, b);
  }
};

} // namespace

std::unique_ptr<Peer> makeNaivePeer() {
  return std::make_unique<NaivePeer>();
}

} // namespace lanejit::bench
