// The registry: the peers this binary was built with, in a fixed order
// (naive, unfused-pair, avx512, avx512-rows, torch, inductor, onednn).
#include "peers/peer_factories.h"

namespace lanejit::bench {

std::vector<std::unique_ptr<Peer>> availablePeers() {
  std::vector<std::unique_ptr<Peer>> peers;
  peers.push_back(makeNaivePeer());
  peers.push_back(makeUnfusedPairPeer());
#ifdef LANEJIT_PEER_AVX512
  peers.push_back(makeAvx512Peer());
  peers.push_back(makeAvx512RowsPeer());
#endif
#ifdef LANEJIT_PEER_TORCH
  if (std::unique_ptr<Peer> torch = makeTorchPeer()) // null if its module failed to load
    peers.push_back(std::move(torch));
#endif
#ifdef LANEJIT_PEER_INDUCTOR
  if (std::unique_ptr<Peer> inductor = makeInductorPeer())
    peers.push_back(std::move(inductor));
#endif
#ifdef LANEJIT_PEER_ONEDNN
  peers.push_back(makeOneDnnPeer());
#endif
  return peers;
}

void addThreadedPeers(std::vector<std::unique_ptr<Peer>> &peers, int threads) {
  size_t single = peers.size();
  for (int t = 2; t <= threads; ++t)
    for (size_t i = 0; i < single; ++i)
      if (std::unique_ptr<Peer> p = peers[i]->withThreads(t))
        peers.push_back(std::move(p));
}

#ifndef LANEJIT_PEER_TORCH
std::string atenCpuCapability() {
  return "";
}
std::vector<std::string> peerModules() {
  return {};
}
#endif

} // namespace lanejit::bench
