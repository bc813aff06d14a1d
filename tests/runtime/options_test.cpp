// CompileOptions: the environment switches (disable wins), the CLI's
// setSwitch, and the cache key with its inverse.
#include <lanejit/error.h>
#include <lanejit/options.h>

#include <gtest/gtest.h>

#include <cstdlib>

namespace lanejit {
namespace {

// Sets environment variables for one scope.
class Env {
public:
  Env(std::initializer_list<std::pair<const char *, const char *>> vars) {
    for (auto [name, value] : vars) {
      names_.push_back(name);
      setenv(name, value, 1);
    }
  }
  ~Env() {
    for (const char *name : names_)
      unsetenv(name);
  }

private:
  std::vector<const char *> names_;
};

TEST(Options, EnvironmentDisablesAndDisableWins) {
  {
    Env env{{"LANEJIT_DISABLE_FUSE_POINTWISE", "1"}, {"LANEJIT_DISABLE_HOIST_GUARDS", "on"}};
    CompileOptions o = CompileOptions::fromEnvironment();
    EXPECT_FALSE(o.fuse_pointwise);
    EXPECT_FALSE(o.hoist_guards);
    EXPECT_TRUE(o.fuse_reductions);
  }
  {
    Env env{{"LANEJIT_ENABLE_FUSE_OUTPUTS", "1"}, {"LANEJIT_DISABLE_FUSE_OUTPUTS", "1"}};
    EXPECT_FALSE(CompileOptions::fromEnvironment().fuse_outputs);
  }
  {
    CompileOptions base;
    base.bound_masked_columns = false;
    Env env{{"LANEJIT_ENABLE_BOUND_MASKED_COLUMNS", "yes"}};
    EXPECT_TRUE(CompileOptions::fromEnvironment(base).bound_masked_columns);
  }
}

TEST(Options, InliningIsThreeWay) {
  EXPECT_EQ(CompileOptions::fromEnvironment().inline_packet_bodies,
            CompileOptions::Inline::CostRule);
  {
    Env env{{"LANEJIT_ENABLE_INLINE_PACKET_BODIES", "1"}};
    EXPECT_EQ(CompileOptions::fromEnvironment().inline_packet_bodies,
              CompileOptions::Inline::Always);
  }
  {
    Env env{{"LANEJIT_ENABLE_INLINE_PACKET_BODIES", "1"},
            {"LANEJIT_DISABLE_INLINE_PACKET_BODIES", "1"}};
    EXPECT_EQ(CompileOptions::fromEnvironment().inline_packet_bodies,
              CompileOptions::Inline::Never);
  }
}

TEST(Options, MalformedValuesAndUnknownSwitchesAreErrors) {
  {
    Env env{{"LANEJIT_DISABLE_FUSE_POINTWISE", "maybe"}};
    EXPECT_THROW(CompileOptions::fromEnvironment(), Error);
  }
  CompileOptions o;
  EXPECT_THROW(o.setSwitch("FUSE_EVERYTHING", true), Error);
  for (const std::string &name : CompileOptions::switchNames())
    EXPECT_NO_THROW(o.setSwitch(name, false)) << name;
  EXPECT_FALSE(o.fuse_pointwise);
  EXPECT_FALSE(o.specialize_full_packets);
}

TEST(Options, KeyRoundTripsAndSeparatesEveryCodeSwitch) {
  CompileOptions base;
  std::vector<CompileOptions> all{base};
  for (const std::string &name : CompileOptions::switchNames()) {
    CompileOptions o = base;
    o.setSwitch(name, false);
    all.push_back(o);
  }
  CompileOptions odd;
  odd.lanes = 8;
  odd.opt_level = 1;
  odd.target_features = "-avx512f";
  odd.disabled_passes = {"cse", "eliminate-slices"};
  all.push_back(odd);
  CompileOptions pinned = odd;
  pinned.target_cpu = "znver3";
  all.push_back(pinned);
  CompileOptions arm = base;
  arm.target_triple = "aarch64-linux-gnu";
  arm.target_cpu = "apple-m1";
  all.push_back(arm);
  for (const CompileOptions &o : all) {
    CompileOptions back = CompileOptions::fromKey(o.key());
    EXPECT_EQ(back.key(), o.key());
  }
  // Switches that change code change the key; dump/time do not.
  CompileOptions spec = base;
  spec.specialize_full_packets = false;
  EXPECT_NE(spec.key(), base.key());
  CompileOptions dump = base;
  dump.dump_passes = true;
  EXPECT_EQ(dump.key(), base.key());
  EXPECT_NE(pinned.key(), odd.key());
  EXPECT_EQ(CompileOptions::fromKey(pinned.key()).target_cpu, "znver3");
  EXPECT_NE(arm.key(), base.key());
  EXPECT_EQ(CompileOptions::fromKey(arm.key()).target_triple, "aarch64-linux-gnu");
}

TEST(Options, TargetCpuFromTheEnvironmentAndKeysWithoutIt) {
  {
    Env env{{"LANEJIT_TARGET_CPU", "x86-64-v3"}, {"LANEJIT_TARGET_FEATURES", "-fma"}};
    CompileOptions o = CompileOptions::fromEnvironment();
    EXPECT_EQ(o.target_cpu, "x86-64-v3");
    EXPECT_EQ(o.target_features, "-fma");
  }
  {
    Env env{{"LANEJIT_TARGET_TRIPLE", "aarch64-linux-gnu"}};
    EXPECT_EQ(CompileOptions::fromEnvironment().target_triple, "aarch64-linux-gnu");
  }
  EXPECT_EQ(CompileOptions::fromEnvironment().target_cpu, "");
  // The host's key has no cpu field, as keys recorded before it existed
  // (bench bundles) do not; they still read back.
  std::string host = CompileOptions().key();
  EXPECT_EQ(host.find("cpu="), std::string::npos) << host;
  EXPECT_EQ(host.find("triple="), std::string::npos) << host;
  EXPECT_EQ(CompileOptions::fromKey(host).target_cpu, "");
  // An empty cpu field is not canonical.
  std::string empty = host;
  empty.insert(empty.find("features="), "cpu=;");
  EXPECT_THROW(CompileOptions::fromKey(empty), Error) << empty;
}

TEST(Options, FromKeyRejectsAnythingElse) {
  std::string key = CompileOptions().key();
  for (const std::string &bad : {std::string(""), key + "extra=1;", key.substr(0, key.size() / 2),
                                 std::string("lanes=x;"), key + ";"}) {
    EXPECT_THROW(CompileOptions::fromKey(bad), Error) << bad;
  }
}

TEST(CompileOptions, AKeyFromBeforeASwitchExistedReadsWithTheSwitchOff) {
  // Bundles written by an older lanejit lack the switches added since.
  CompileOptions o;
  std::string key = o.key();
  ASSERT_NE(key.find(";FLATTEN_ROWS=1;"), std::string::npos) << key;
  std::string old = key;
  old.replace(old.find(";FLATTEN_ROWS=1;"), 16, ";");
  CompileOptions back = CompileOptions::fromKey(old);
  EXPECT_FALSE(back.flatten_rows);
  EXPECT_TRUE(back.fuse_outputs);
  EXPECT_NE(back.key(), key);
}

} // namespace
} // namespace lanejit
