// bench/peers/peer_factories.h — what available_peers.cpp lists. Each maker
// lives in its peer's own file and is compiled only when that peer's
// package (or compiler support) was found; CMake defines LANEJIT_PEER_<NAME>.
#pragma once

#include "peers/peer.h"

namespace lanejit::bench {

std::unique_ptr<Peer> makeNaivePeer();
// lanejit's rmsnorm kernel then its quantize_q8 (rmsnorm_q8) or
// quantize_q8_0 (rmsnorm_q8_0) kernel; those two only.
std::unique_ptr<Peer> makeUnfusedPairPeer();
std::unique_ptr<Peer> makeAvx512Peer();
// Whether this CPU runs the AVX-512 peers' kernels (AVX-512F, DQ and VL).
bool cpuHasAvx512();
std::unique_ptr<Peer> makeAvx512RowsPeer();
std::unique_ptr<Peer> makeTorchPeer();
// Null, with one line on stderr, when its Python or build script is gone.
// The first form uses the build's Python and the source tree's script.
std::unique_ptr<Peer> makeInductorPeer();
std::unique_ptr<Peer> makeInductorPeer(const std::string &python, const std::string &script);
std::unique_ptr<Peer> makeOneDnnPeer();

// How many inputs a library operator takes (rope 3, layernorm 3, swiglu 2,
// rmsnorm 2, gelu_residual 2, masked_softmax 1, rmsnorm_q8 2, rmsnorm_q8_0
// 2); throws Error(Kind::Bind) for an unknown name.
size_t opInputCount(const std::string &op);
// How many outputs: rmsnorm_q8 and rmsnorm_q8_0 2 (q, scale), the six
// operators 1.
size_t opOutputCount(const std::string &op);

// Throws Error(Kind::Bind), naming `peer`, unless `buffers` is a case this
// peer can run: a known op it supports, the op's input and output counts,
// non-null pointers, rows >= 1, cols >= 1 (even for RoPE, a multiple of 32
// for rmsnorm_q8_0).
void requireRunnable(const Peer &peer, const CaseBuffers &buffers);

// A peer that is one plain function over the case's buffers (the naive
// loops, the hand-written AVX-512 kernels): no setup, call() is one call.
using RowsFunction = void (*)(const float *const *inputs, float *output, int64_t rows,
                              int64_t cols);
std::unique_ptr<PreparedPeer> prepareFunction(RowsFunction fn, const CaseBuffers &buffers);

} // namespace lanejit::bench
