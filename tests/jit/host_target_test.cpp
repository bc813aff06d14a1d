// The target a compile is for: the host, or a named CPU (the host never
// consulted), with feature overrides that take what depends on them along.
#include "jit/host_target.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>
#include <llvm/TargetParser/Host.h>

#include <string>

namespace lanejit::jit {
namespace {

bool lists(const std::string &features, const std::string &feature) {
  return ("," + features + ",").find("," + feature + ",") != std::string::npos;
}

TEST(HostTarget, TripleIsTheProcesssOwn) {
  EXPECT_EQ(hostTarget().triple, llvm::sys::getProcessTriple());
  EXPECT_EQ(targetFor("x86-64-v3", "").triple, llvm::sys::getProcessTriple());
}

TEST(HostTarget, ANamedCpuHasItsOwnFeaturesAndName) {
  HostTarget v4 = targetFor("x86-64-v4", "");
  EXPECT_EQ(v4.cpu, "x86-64-v4");
  EXPECT_TRUE(v4.avx512f && v4.avx && v4.fma);
  EXPECT_EQ(v4.maxLanes(), 16);
  // What a feature implies is listed too: AVX2 implies AVX.
  HostTarget v3 = targetFor("x86-64-v3", "");
  EXPECT_TRUE(lists(v3.features, "+avx2")) << v3.features;
  EXPECT_TRUE(lists(v3.features, "+avx")) << v3.features;
  EXPECT_FALSE(v3.avx512f);
  EXPECT_EQ(v3.maxLanes(), 8);
  EXPECT_EQ(targetFor("znver4", "").maxLanes(), 16);
  EXPECT_EQ(targetFor("znver3", "").maxLanes(), 8);
  EXPECT_EQ(targetFor("x86-64", "").maxLanes(), 4);
}

TEST(HostTarget, TurningAFeatureOffTurnsOffWhatNeedsIt) {
  // Without this, "-avx512f,...,+avx512vl" in LLVM's ordered list would
  // turn avx512f back on.
  for (const std::string &cpu : {std::string("x86-64-v4"), std::string("")}) {
    HostTarget t = targetFor(cpu, "-avx512f");
    SCOPED_TRACE(cpu + ": " + t.features);
    EXPECT_FALSE(t.avx512f);
    EXPECT_EQ(t.features.find("+avx512"), std::string::npos);
    EXPECT_LE(t.maxLanes(), 8);
  }
  HostTarget t = targetFor("x86-64-v3", "+avx512f");
  EXPECT_TRUE(t.avx512f);
  EXPECT_EQ(t.cpu, "x86-64-v3");
}

TEST(HostTarget, TheHostWithOverridesIsTunedForGenericX8664) {
  EXPECT_EQ(targetFor("", "").features, hostTarget().features);
  EXPECT_EQ(targetFor("", "-avx512f").cpu, "x86-64");
}

TEST(HostTarget, AnUnknownCpuIsACompileError) {
  try {
    targetFor("no-such-cpu", "");
    ADD_FAILURE() << "accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Compile);
    EXPECT_NE(std::string(e.what()).find("unknown target CPU 'no-such-cpu'"), std::string::npos);
  }
  EXPECT_THROW(targetFor("i386", ""), Error) << "32-bit only";
}

TEST(HostTarget, AnAarch64TripleIsThatArchitecture) {
  HostTarget m1 = targetFor("aarch64-linux-gnu", "apple-m1", "");
  EXPECT_EQ(m1.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(m1.cpu, "apple-m1");
  EXPECT_TRUE(m1.aarch64 && m1.fma);
  EXPECT_FALSE(m1.avx512f || m1.avx);
  EXPECT_TRUE(lists(m1.features, "+neon")) << m1.features;
  EXPECT_EQ(m1.maxLanes(), 8);
  EXPECT_EQ(targetFor("aarch64", "", "").cpu, "generic");
  EXPECT_EQ(targetFor("aarch64", "", "").triple, "aarch64-unknown-linux-gnu");
  EXPECT_FALSE(runsOnHostArchitecture(m1.triple));
  EXPECT_TRUE(runsOnHostArchitecture(hostTarget().triple));
  // The host's own triple is the host (features detected as ever).
  EXPECT_EQ(targetFor(hostTarget().triple, "", "").features, hostTarget().features);
  EXPECT_THROW(targetFor("aarch64-linux-gnu", "not-a-cpu", ""), Error);
  EXPECT_THROW(targetFor("riscv64-linux-gnu", "", ""), Error);
}

} // namespace
} // namespace lanejit::jit
