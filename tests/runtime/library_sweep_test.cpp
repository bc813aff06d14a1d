// Every library operator, every W, full-packet specialization on and off:
// each output element within atol = rtol = 5e-5 of the FP64 oracle, inputs
// unchanged, guard zones intact, and all configurations bitwise identical
// (the reduction order is fixed by 64 virtual lanes, so not even W changes
// a bit).
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <cstring>
#include <random>

namespace lanejit {
namespace {

struct Config {
  int lanes;
  bool spec;
};
constexpr Config kConfigs[] = {{4, true},  {4, false}, {8, true},
                               {8, false}, {16, true}, {16, false}};

class LibrarySweep : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    program_ = library::byName(GetParam());
    for (Config c : kConfigs) {
      CompileOptions o = test::targetOptions();
      o.lanes = c.lanes;
      o.specialize_full_packets = c.spec;
      kernels_.push_back(compile(program_, o));
    }
  }

  // RoPE needs an even C: its tails are those of C/2.
  int64_t multiple() const { return GetParam() == "rope" ? 2 : 1; }

  // Runs every configuration on one case; checks each against the oracle
  // and all against the first bit for bit.
  void checkShape(Shape shape, check::Fill fill, uint64_t seed, int64_t pad = 0) {
    SCOPED_TRACE(testing::Message() << GetParam() << " " << shape.rows << "x" << shape.cols
                                    << " pad " << pad << " seed " << seed);
    check::Case c = check::makeCase(program_, shape, fill, seed, pad);
    std::vector<std::vector<float>> first;
    for (size_t k = 0; k < kernels_.size(); ++k) {
      SCOPED_TRACE(testing::Message() << "W=" << kConfigs[k].lanes << " spec=" << kConfigs[k].spec);
      for (check::GuardedBuffer &out : c.outputs)
        out.fill(std::numeric_limits<float>::quiet_NaN());
      ASSERT_TRUE(test::runMatchesReference(kernels_[k], c));
      for (size_t o = 0; o < c.outputs.size(); ++o) {
        const check::GuardedBuffer &out = c.outputs[o];
        std::vector<float> bits(out.data(), out.data() + out.elements());
        if (k == 0) {
          first.push_back(std::move(bits));
          continue;
        }
        // memcmp on an empty output would get null pointers (UBSan).
        ASSERT_TRUE(bits.empty() ||
                    std::memcmp(bits.data(), first[o].data(), bits.size() * sizeof(float)) == 0)
            << "output differs bitwise from W=" << kConfigs[0].lanes << " spec=on";
      }
    }
  }

  Program program_;
  std::vector<Kernel> kernels_;
};

TEST_P(LibrarySweep, SeedFixturesAtSeedShapes) {
  int64_t extra = multiple() == 2 ? 1 : 0; // RoPE 17x66 and 1024x4098
  checkShape({17, 65 + extra}, check::Fill::Fixture, 0);
  checkShape({1024, 4097 + extra}, check::Fill::Fixture, 0);
}

TEST_P(LibrarySweep, MidSizes) {
  checkShape({129, 768}, check::Fill::Random, 7);
  checkShape({257, 1538}, check::Fill::Random, 8);
}

TEST_P(LibrarySweep, EveryTailUpTo3WPlus1) {
  std::mt19937_64 rng(42);
  for (int64_t k = 1; k <= 3 * 16 + 1; ++k)
    checkShape({static_cast<int64_t>(1 + rng() % 70), k * multiple()}, check::Fill::Random, k);
}

TEST_P(LibrarySweep, RandomLargeColumnCounts) {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 4; ++i) {
    int64_t cols = (1000 + static_cast<int64_t>(rng() % 3200)) / multiple() * multiple();
    checkShape({static_cast<int64_t>(1 + rng() % 70), cols}, check::Fill::Random, 100 + i);
  }
}

TEST_P(LibrarySweep, PaddedRowStrides) {
  for (int64_t pad : {1, 3, 16})
    checkShape({9, 37 * multiple()}, check::Fill::Random, 5, pad);
}

TEST_P(LibrarySweep, EmptyShapes) {
  checkShape({0, 8 * multiple()}, check::Fill::Random, 1);
  checkShape({3, 0}, check::Fill::Random, 1);
}

INSTANTIATE_TEST_SUITE_P(AllOperators, LibrarySweep,
                         ::testing::Values("rope", "layernorm", "swiglu", "rmsnorm",
                                           "gelu_residual", "masked_softmax"),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace lanejit
