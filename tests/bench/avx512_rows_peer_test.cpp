// The `avx512-rows` peer (bench/peers/avx512_rows_kernels.cpp): rows across
// lanes for narrow rows, with its own tails (expand loads, compress stores,
// masked row blocks), so it is swept over every C it runs across lanes and
// a few past its limit, at row counts below, on and around a 16-row block:
// each result matches the FP64 oracle and the naive peer within 5e-5, and
// no store leaves the output buffer.
#include "bench/peer_cases.h"
#include "peers/peer.h"

#include <lanejit/check.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace lanejit::bench {
namespace {

// Runs `peer` once on a fresh case (random inputs, seed fixed by the shape).
check::Case runOn(const Peer &peer, const std::string &op, Shape shape) {
  check::Case c = check::makeCase(library::byName(op), shape, check::Fill::Random,
                                  /*seed=*/static_cast<uint64_t>(shape.rows * 131 + shape.cols));
  peer.prepare(buffersOf(op, c))->call();
  return c;
}

// |got - want| <= 5e-5 + 5e-5 |want| everywhere, as the bench checks.
::testing::AssertionResult sameWithin(const check::GuardedBuffer &got,
                                      const check::GuardedBuffer &want) {
  for (int64_t r = 0; r < got.rows(); ++r)
    for (int64_t c = 0; c < got.cols(); ++c) {
      double g = got.at(r, c), w = want.at(r, c);
      if (!(std::abs(g - w) <= 5e-5 + 5e-5 * std::abs(w)))
        return ::testing::AssertionFailure()
               << "y[" << r << "," << c << "]: " << g << ", naive " << w;
    }
  return ::testing::AssertionSuccess();
}

TEST(Avx512RowsPeer, MatchesTheOracleAndNaiveAtEveryNarrowShape) {
  // Before: the peers built here; the new one runs only with AVX-512.
  auto peers = availablePeers();
  const Peer *rows_peer = findPeer(peers, "avx512-rows");
  const Peer *naive = findPeer(peers, "naive");
  ASSERT_NE(naive, nullptr);
  if (!rows_peer || !rows_peer->supports("rmsnorm"))
    GTEST_SKIP() << "avx512-rows not built or this CPU lacks AVX-512F/DQ/VL";
  for (const std::string op : {"masked_softmax", "rmsnorm", "layernorm"}) {
    ASSERT_TRUE(rows_peer->supports(op)) << op;
    for (int64_t cols = 1; cols <= 70; ++cols)
      for (int64_t rows : {1, 2, 15, 16, 17, 1000}) {
        std::string where = op + " " + std::to_string(rows) + "x" + std::to_string(cols) + ": ";
        // Action: the new peer and the naive loops on the same inputs.
        check::Case got = runOn(*rows_peer, op, {rows, cols});
        check::Case want = runOn(*naive, op, {rows, cols});
        // Expected: the oracle's and the naive loops' results, guards intact.
        check::Comparison cmp = check::compareWithReference(got);
        EXPECT_TRUE(cmp.ok()) << where << cmp.failures << " of " << cmp.checked << " wrong, "
                              << cmp.first_failure;
        EXPECT_TRUE(sameWithin(got.outputs[0], want.outputs[0])) << where;
        EXPECT_TRUE(got.outputs[0].guardsIntact()) << where << "output guard zone damaged";
        if (!cmp.ok() || !got.outputs[0].guardsIntact())
          return; // one shape's failure says enough
      }
  }
}

TEST(Avx512RowsPeer, RunsOnlyItsThreeOperators) {
  // Before: the peers built here.
  auto peers = availablePeers();
  const Peer *rows_peer = findPeer(peers, "avx512-rows");
  if (!rows_peer)
    GTEST_SKIP() << "avx512-rows not built here";
  // Expected: no RoPE, SwiGLU or GELU (elementwise or not narrow-row reductions).
  for (const std::string op : {"rope", "swiglu", "gelu_residual", "matmul"})
    EXPECT_FALSE(rows_peer->supports(op)) << op;
  EXPECT_NE(rows_peer->description().find("rows across lanes"), std::string::npos);
}

} // namespace
} // namespace lanejit::bench
