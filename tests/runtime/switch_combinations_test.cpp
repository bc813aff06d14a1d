// Every library program x W in {4, 8, 16} x a strength-3 covering array of
// the boolean switches and the three inlining policies: any three of those
// factors appear in every combination of their settings (the exhaustive
// product grows as 2^k with k switches; the array stays a few dozen
// configurations). Each output element within atol = rtol = 5e-5 of the
// FP64 oracle, inputs unchanged, guard zones intact, and every configuration
// bitwise identical to the baseline (W=4, all defaults): no switch, and not
// W, changes an output bit.
//
// Compiling is the cost, so each configuration is compiled once (one test
// per program and W, so ctest can spread them) and run on a few small
// shapes chosen to cover full packets only, a tail for every W, a RoPE
// split landing mid-packet, one column, and padded rows.
#include "support/covering_array.h"
#include "support/testing.h"

#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <vector>

namespace lanejit {
namespace {

using Inline = CompileOptions::Inline;

// The boolean switches that change code, from the one table
// (src/options/switches.def), by name so a configuration can be described.
struct Switch {
  const char *name;
  bool CompileOptions::*field;
};
const std::vector<Switch> kSwitches = [] {
  std::vector<Switch> switches;
  auto add = [&](const char *name, auto field) {
    if constexpr (std::is_same_v<decltype(field), bool CompileOptions::*>)
      switches.push_back({name, field});
  };
#define LANEJIT_LOWERING_PASS(name, field, summary, call) add(#field, &CompileOptions::field);
#define LANEJIT_CODEGEN_SWITCH(field, summary) add(#field, &CompileOptions::field);
#include "options/switches.def"
  return switches;
}();
const int kSwitchCount = static_cast<int>(kSwitches.size());
constexpr Inline kInlinePolicies[] = {Inline::CostRule, Inline::Always, Inline::Never};
constexpr int kLanes[] = {4, 8, 16};

const char *inlineName(Inline policy) {
  switch (policy) {
  case Inline::CostRule: return "cost-rule";
  case Inline::Always: return "always";
  case Inline::Never: return "never";
  }
  return "?";
}

// "W=8 inline=never off:{fuse_outputs,hoist_guards}".
std::string describe(const CompileOptions &o) {
  std::ostringstream s;
  s << "W=" << o.lanes << " inline=" << inlineName(o.inline_packet_bodies) << " off:{";
  const char *sep = "";
  for (const Switch &sw : kSwitches)
    if (!(o.*sw.field)) {
      s << sep << sw.name;
      sep = ",";
    }
  s << "}";
  return s.str();
}

// Factor 0 is the inlining policy, factor 1 + i switch i; level 0 is the
// default (the cost rule; the switch's default), level 1 the other value.
std::vector<int> factorLevels() {
  std::vector<int> levels{static_cast<int>(std::size(kInlinePolicies))};
  levels.resize(1 + kSwitchCount, 2);
  return levels;
}

bool switchDefault(int i) {
  return CompileOptions().*kSwitches[i].field;
}

std::vector<test::CoveringRow> coveringRows() {
  test::CoveringRow defaults(1 + kSwitchCount, 0), allOff(1 + kSwitchCount, 0);
  allOff[0] = 2; // inline never
  for (int i = 0; i < kSwitchCount; ++i)
    allOff[1 + i] = switchDefault(i) ? 1 : 0;
  return test::coveringArray(factorLevels(), 3, {defaults, allOff});
}

// The configurations at one W; the first has every default.
std::vector<CompileOptions> configurationsAt(int lanes) {
  std::vector<CompileOptions> configs;
  for (const test::CoveringRow &row : coveringRows()) {
    // Defaults, not the environment (the sweep is explicit), but its target.
    CompileOptions o = test::targetOptions();
    o.lanes = lanes;
    o.inline_packet_bodies = kInlinePolicies[row[0]];
    for (int i = 0; i < kSwitchCount; ++i)
      o.*kSwitches[i].field = (row[1 + i] == 0) == switchDefault(i);
    configs.push_back(o);
  }
  return configs;
}

// The configuration every other one must match bit for bit, whatever its W.
CompileOptions baseline() {
  CompileOptions o = test::targetOptions();
  o.lanes = 4;
  return o;
}

TEST(SwitchConfigurations, CoverEveryThreeFactorsAndAreDistinct) {
  std::string missed;
  EXPECT_TRUE(test::coversAllInteractions(factorLevels(), 3, coveringRows(), &missed)) << missed;
  std::vector<CompileOptions> configs;
  for (int lanes : kLanes)
    for (const CompileOptions &o : configurationsAt(lanes))
      configs.push_back(o);
  std::cout << "[ info     ] " << configs.size() / std::size(kLanes)
            << " configurations per W (exhaustive: "
            << std::size(kInlinePolicies) * (size_t(1) << kSwitchCount) << ")\n";
  std::set<std::string> keys, descriptions;
  for (const CompileOptions &o : configs) {
    keys.insert(o.key());
    descriptions.insert(describe(o));
  }
  // Distinct cache keys: no configuration silently reuses another's code.
  EXPECT_EQ(keys.size(), configs.size());
  EXPECT_EQ(descriptions.size(), configs.size());
  EXPECT_EQ(describe(configs[0]), describe(baseline()));
  EXPECT_EQ(configs[0].key(), baseline().key());
}

// One program at one W (18 tests, so ctest can spread the compile time).
class SwitchCombinations : public ::testing::TestWithParam<std::tuple<std::string, int>> {
protected:
  void SetUp() override {
    name_ = std::get<0>(GetParam());
    program_ = library::byName(name_);
    configs_ = configurationsAt(std::get<1>(GetParam()));
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    for (const CompileOptions &o : configs_)
      kernels_.push_back(compile(program_, o));
    // Printed, never asserted: the numbers tell whether the sweep stays cheap.
    std::cout << "[ info     ] " << name_ << " W=" << std::get<1>(GetParam()) << ": compiled "
              << configs_.size() << " configurations in "
              << double(std::clock() - cpu) / CLOCKS_PER_SEC << " s CPU, "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
              << " s wall\n";
  }

  // RoPE needs an even C: its tails and its split are those of C/2.
  int64_t multiple() const { return name_ == "rope" ? 2 : 1; }

  // Runs the baseline and then every configuration on one case. Failures
  // are collected with the configuration's name and reported once, so a
  // pattern (say, every configuration with fuse_outputs off) shows at a
  // glance.
  void checkShape(Shape shape, uint64_t seed, int64_t pad = 0) {
    SCOPED_TRACE(testing::Message() << name_ << " " << shape.rows << "x" << shape.cols << " pad "
                                    << pad << " seed " << seed);
    check::Case c = check::makeCase(program_, shape, check::Fill::Random, seed, pad);
    ASSERT_TRUE(runFresh(compile(program_, baseline()), c)) << describe(baseline());
    std::vector<std::vector<float>> want; // every output's bytes, row padding included
    for (const check::GuardedBuffer &out : c.outputs)
      want.emplace_back(out.data(), out.data() + out.elements());

    std::vector<std::string> failures;
    for (size_t k = 0; k < kernels_.size(); ++k) {
      ::testing::AssertionResult ok = runFresh(kernels_[k], c);
      for (size_t o = 0; ok && o < c.outputs.size(); ++o) {
        const check::GuardedBuffer &out = c.outputs[o];
        std::string where = firstDifference(out, want[o]);
        if (!where.empty())
          ok = ::testing::AssertionFailure()
               << "output '" << program_.outputs[o].name << "' differs bitwise from "
               << describe(baseline()) << " at " << where;
      }
      if (!ok)
        failures.push_back(describe(configs_[k]) + ": " + ok.message());
    }
    if (failures.empty())
      return;
    std::ostringstream list;
    for (size_t i = 0; i < failures.size() && i < 24; ++i)
      list << "\n  " << failures[i];
    if (failures.size() > 24)
      list << "\n  ... and " << failures.size() - 24 << " more";
    ADD_FAILURE() << failures.size() << " of " << configs_.size()
                  << " configurations failed:" << list.str();
  }

  // Outputs pre-filled with NaN, then run and checked against the oracle.
  static ::testing::AssertionResult runFresh(const Kernel &kernel, check::Case &c) {
    for (check::GuardedBuffer &out : c.outputs)
      out.fill(std::numeric_limits<float>::quiet_NaN());
    return test::runMatchesReference(kernel, c);
  }

  // "[r,c]: got vs want" at the first element whose bits differ, or "".
  static std::string firstDifference(const check::GuardedBuffer &got,
                                     const std::vector<float> &want) {
    for (size_t i = 0; i < want.size(); ++i)
      if (std::memcmp(&got.data()[i], &want[i], sizeof(float)) != 0) {
        std::ostringstream s;
        s.precision(9);
        s << "[" << i / got.rowStride() << "," << i % got.rowStride() << "]: " << got.data()[i]
          << " vs " << want[i];
        return s.str();
      }
    return "";
  }

  std::string name_;
  Program program_;
  std::vector<CompileOptions> configs_;
  std::vector<Kernel> kernels_;
};

TEST_P(SwitchCombinations, AllConfigurationsAgreeBitwiseAndWithTheOracle) {
  const int64_t m = multiple();
  // 2*16+5 columns: full packets and a tail for every W (RoPE: halves of
  // 37, so the second half starts mid-packet).
  checkShape({3, (2 * 16 + 5) * m}, 11);
  // Only full packets for every W (RoPE: halves of 48).
  checkShape({5, 48 * m}, 12);
  // One column (RoPE: halves of one): a lone tail lane, no full packet.
  checkShape({2, 1 * m}, 13);
  // Padded rows: the padding is NaN in inputs and must stay NaN in outputs.
  checkShape({4, 21 * m}, 14, 3);
}

INSTANTIATE_TEST_SUITE_P(AllOperators, SwitchCombinations,
                         ::testing::Combine(::testing::Values("rope", "layernorm", "swiglu",
                                                              "rmsnorm", "gelu_residual",
                                                              "masked_softmax"),
                                            ::testing::ValuesIn(kLanes)),
                         [](const auto &info) {
                           return std::get<0>(info.param) + "_W" +
                                  std::to_string(std::get<1>(info.param));
                         });

} // namespace
} // namespace lanejit
