// The buffer checks every peer's prepare() runs (peer_factories.h). Also
// compiled into the torch module, which cannot see lanejit_peers' symbols.
#include "peers/peer_factories.h"

#include <lanejit/error.h>

namespace lanejit::bench {

size_t opInputCount(const std::string &op) {
  if (op == "rope" || op == "layernorm")
    return 3;
  if (op == "swiglu" || op == "rmsnorm" || op == "gelu_residual" || op == "rmsnorm_q8" ||
      op == "rmsnorm_q8_0")
    return 2;
  if (op == "masked_softmax")
    return 1;
  throw Error(Error::Kind::Bind, "unknown operator '" + op + "' for a benchmark peer");
}

size_t opOutputCount(const std::string &op) {
  opInputCount(op); // rejects an unknown name
  return op == "rmsnorm_q8" || op == "rmsnorm_q8_0" ? 2 : 1;
}

double peerTolerance(const std::string &dtype) {
  return dtype == "bf16" ? 0x1p-5 : dtype == "f16" ? 0x1p-8 : 5e-5;
}

void requireRunnable(const Peer &peer, const CaseBuffers &b) {
  std::string who = "peer '" + peer.name() + "' on " + b.op + ": ";
  size_t inputs = opInputCount(b.op), outputs = opOutputCount(b.op);
  if (!peer.runs(b.op, b.dtype))
    throw Error(Error::Kind::Bind, who + "operator not supported here in " + b.dtype);
  if (b.inputs.size() != inputs || b.outputs.size() != outputs)
    throw Error(Error::Kind::Bind,
                who + "expected " + std::to_string(inputs) + " inputs and " +
                    std::to_string(outputs) + " output(s), got " +
                    std::to_string(b.inputs.size()) + " and " + std::to_string(b.outputs.size()));
  // Q8_0's scale per 32 columns: the program binds only whole blocks.
  if (b.rows < 1 || b.cols < 1 || (b.op == "rope" && b.cols % 2 != 0) ||
      (b.op == "rmsnorm_q8_0" && b.cols % 32 != 0))
    throw Error(Error::Kind::Bind,
                who + "bad shape " + std::to_string(b.rows) + "x" + std::to_string(b.cols));
  for (const void *p : b.inputs)
    if (!p)
      throw Error(Error::Kind::Bind, who + "null input buffer");
  for (void *p : b.outputs)
    if (!p)
      throw Error(Error::Kind::Bind, who + "null output buffer");
}

namespace {

class FunctionPrepared : public PreparedPeer {
public:
  // Row functions are f32 (requireRunnable has checked the dtype).
  FunctionPrepared(RowsFunction fn, const CaseBuffers &b)
      : fn_(fn), output_(static_cast<float *>(b.outputs[0])), rows_(b.rows), cols_(b.cols) {
    for (const void *p : b.inputs)
      inputs_.push_back(static_cast<const float *>(p));
  }
  void call() override { fn_(inputs_.data(), output_, rows_, cols_); }

private:
  RowsFunction fn_;
  std::vector<const float *> inputs_;
  float *output_;
  int64_t rows_, cols_;
};

} // namespace

std::unique_ptr<PreparedPeer> prepareFunction(RowsFunction fn, const CaseBuffers &buffers) {
  return std::make_unique<FunctionPrepared>(fn, buffers);
}

} // namespace lanejit::bench
