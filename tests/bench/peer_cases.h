// tests/bench/peer_cases.h — what the peer tests share: finding a peer by
// name and handing a check::Case's buffers to one.
#pragma once

#include "peers/peer.h"

#include <lanejit/check.h>

#include <memory>
#include <string>
#include <vector>

namespace lanejit::bench {

// The peer called `name`, or null when this binary was built without it.
inline const Peer *findPeer(const std::vector<std::unique_ptr<Peer>> &peers,
                            const std::string &name) {
  for (const auto &p : peers)
    if (p->name() == name)
      return p.get();
  return nullptr;
}

// The case's inputs and outputs as a peer reads and writes them.
inline CaseBuffers buffersOf(const std::string &op, check::Case &c) {
  CaseBuffers b;
  b.op = op;
  b.dtype = c.inputs.empty() ? "f32" : std::string(name(c.inputs[0].type()));
  b.rows = c.shape.rows;
  b.cols = c.shape.cols;
  for (const check::GuardedBuffer &in : c.inputs)
    b.inputs.push_back(in.raw());
  for (check::GuardedBuffer &out : c.outputs)
    b.outputs.push_back(out.raw());
  return b;
}

} // namespace lanejit::bench
