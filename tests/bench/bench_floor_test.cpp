// The per-case floor (bench/floor.h) and what it is made of: the
// single-stepping instruction counter (bench/instruction_count.h) on a
// hand-written function whose count is known, the extrapolation along rows
// and columns checked against whole stepped calls of real kernels, the path
// where ptrace is refused, the issue-width table, the clock, and a bench
// run whose floor the audit re-derives.
#include "core_clock.h"
#include "floor.h"
#include "instruction_count.h"
#include "issue_width.h"
#include "runner.h"

#include <lanejit/check.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <fstream>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef LANEJIT_HAVE_AUDIT
#include "audit.h"
#endif

// A native entry with a known count: 3 instructions of set-up, 5 per row
// (2 of them on xmm registers), then ret. Rows [b, e): 4 + 5 (e - b).
extern "C" void lanejit_floor_test_entry(const lanejit_launch_args *, int64_t, int64_t);
asm(R"(
  .text
  .globl lanejit_floor_test_entry
  .type lanejit_floor_test_entry, @function
lanejit_floor_test_entry:
  mov %rdx, %rax
  sub %rsi, %rax
  jle 2f
1:
  addps %xmm1, %xmm0
  mulps %xmm1, %xmm0
  add $1, %rcx
  dec %rax
  jnz 1b
2:
  ret
  .size lanejit_floor_test_entry, .-lanejit_floor_test_entry
)");

namespace lanejit::bench {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kSteps = 2'000'000;

// A machine may forbid ptrace (a container's seccomp profile): the tests
// that count instructions then skip with the reason. The refused path
// itself is tested below, with a filter of the test's own.
std::string ptraceRefused() {
  LaunchArgs args{};
  CountResult r = countExecuted(lanejit_floor_test_entry, args, 0, 0, kSteps);
  return r.counts ? std::string() : r.unavailable;
}
#define SKIP_WITHOUT_PTRACE()                                                                  \
  if (std::string why = ptraceRefused(); !why.empty())                                         \
  GTEST_SKIP() << "instructions cannot be counted here: " << why

TEST(InstructionCount, CountsAHandWrittenEntryExactly) {
  SKIP_WITHOUT_PTRACE();
  LaunchArgs args{};
  for (int64_t rows : {0, 1, 3, 10}) {
    CountResult r = countExecuted(lanejit_floor_test_entry, args, 0, rows, kSteps);
    ASSERT_TRUE(r.counts) << r.unavailable;
    EXPECT_EQ(r.counts->instructions, 4 + 5 * rows) << rows;
    EXPECT_EQ(r.counts->vector, 2 * rows) << rows;
  }
}

TEST(InstructionCount, ClassifiesVectorAndMaskOperands) {
  const uint8_t addps[] = {0x0f, 0x58, 0xc1};                   // addps xmm0, xmm1
  const uint8_t vaddps_zmm[] = {0x62, 0xf1, 0x7c, 0x48, 0x58, 0xc1}; // vaddps zmm0, zmm0, zmm1
  const uint8_t kmovw[] = {0xc5, 0xf8, 0x90, 0xca};             // kmovw k1, k2
  const uint8_t add[] = {0x48, 0x01, 0xd8};                     // add rax, rbx
  EXPECT_EQ(isVectorInstruction(addps, sizeof addps), true);
  EXPECT_EQ(isVectorInstruction(vaddps_zmm, sizeof vaddps_zmm), true);
  EXPECT_EQ(isVectorInstruction(kmovw, sizeof kmovw), true);
  EXPECT_EQ(isVectorInstruction(add, sizeof add), false);
}

TEST(InstructionCount, GivesUpAtTheStepBudget) {
  SKIP_WITHOUT_PTRACE();
  LaunchArgs args{};
  CountResult r = countExecuted(lanejit_floor_test_entry, args, 0, 1000, 100);
  EXPECT_FALSE(r.counts);
  EXPECT_NE(r.unavailable.find("step budget"), std::string::npos) << r.unavailable;
}

// Installs a seccomp filter that fails ptrace with EPERM, as a machine
// that forbids it would; false when this kernel does not allow filters.
bool refusePtrace() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

TEST(InstructionCount, RefusedPtraceIsUnavailableNotACrash) {
  // In a child of the test, so the filter stays out of the test process.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!refusePtrace())
      _exit(2);
    LaunchArgs args{};
    CountResult r = countExecuted(lanejit_floor_test_entry, args, 0, 3, kSteps);
    bool said = !r.counts && r.unavailable.find("refused") != std::string::npos;
    // The whole compute part, on a real kernel: unavailable, with the reason.
    Kernel k = compile(library::rmsNorm());
    check::Case c = check::makeCase(k.program(), {4, 65});
    ComputeFloorRecord compute = measureComputeFloor(k, c);
    said = said && compute.unavailable.find("refused") != std::string::npos;
    _exit(said ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2)
    GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "ptrace refused was not reported as unavailable";
}

TEST(Floor, WithoutTheComputePartTheFloorIsTheMemoryPartMarked) {
  FloorRecord f;
  f.memory_s = 2e-6;
  f.compute.unavailable = "ptrace(PTRACE_TRACEME) refused: Operation not permitted";
  completeFloor(f, 3e-6);
  EXPECT_EQ(f.bound, "memory only");
  EXPECT_DOUBLE_EQ(f.floor_s, 2e-6);
  EXPECT_DOUBLE_EQ(f.ratio, 1.5);
}

TEST(Floor, TheLargerPartBounds) {
  FloorRecord f;
  f.memory_s = 2e-6;
  f.compute.seconds = 4e-6;
  completeFloor(f, 8e-6);
  EXPECT_EQ(f.bound, "compute");
  EXPECT_DOUBLE_EQ(f.ratio, 2);
}

TEST(Floor, PerRowScalingOfTheHandWrittenEntry) {
  SKIP_WITHOUT_PTRACE();
  // Rows [0,1) and [0,2) give the set-up and the per-row count; a call of
  // 10 rows is then 4 + 5 x 10, as stepping it whole gives.
  StepPlan plan = planSteps(10, 33, 1, false);
  EXPECT_EQ(plan.method, "rows");
  ComputeFloorRecord r;
  r.method = plan.method;
  LaunchArgs args{};
  for (auto [cols, rows] : plan.calls) {
    CountResult c = countExecuted(lanejit_floor_test_entry, args, 0, rows, kSteps);
    ASSERT_TRUE(c.counts);
    r.stepped.push_back({cols, rows, c.counts->instructions, c.counts->vector});
  }
  auto call = perCallCounts(r, 10, 33);
  ASSERT_TRUE(call);
  EXPECT_DOUBLE_EQ(call->first, 54);
  EXPECT_DOUBLE_EQ(call->second, 20);
}

TEST(Floor, PlansFollowTheEntryAndTheShape) {
  SKIP_WITHOUT_PTRACE();
  EXPECT_EQ(planSteps(1, 65, 1, false).method, "whole call");
  EXPECT_EQ(planSteps(17, 65, 1, false).method, "rows");
  EXPECT_EQ(planSteps(1024, 4097, 1, true).method, "rows and columns");
  EXPECT_EQ(planSteps(1, 4096, 1, true).method, "columns");
  EXPECT_EQ(planSteps(1024, 4097, 1, false).method, "rows"); // an entry for one C
  StepPlan across = planSteps(4096, 8, 16, false);
  EXPECT_EQ(across.calls, (std::vector<std::pair<int64_t, int64_t>>{{8, 16}, {8, 32}}));
  StepPlan columns = planSteps(1024, 4097, 1, true);
  EXPECT_EQ(columns.calls,
            (std::vector<std::pair<int64_t, int64_t>>{{257, 1}, {257, 2}, {513, 1}}));
}

// Steps the kernel's default entry over rows [0, rows) at the case's C.
ExecutedInstructions wholeCall(const Kernel &k, check::Case &c, int64_t rows) {
  std::vector<void *> buffers;
  std::vector<int64_t> strides;
  for (auto *list : {&c.inputs, &c.outputs})
    for (check::GuardedBuffer &b : *list) {
      buffers.push_back(b.raw());
      strides.push_back(b.rowStride());
    }
  int64_t floats = k.workspaceFloats(c.shape.cols);
  check::GuardedBuffer workspace(1, std::max<int64_t>(floats, 1), std::max<int64_t>(floats, 1));
  LaunchArgs args{buffers.data(), strides.data(), c.shape.rows, c.shape.cols, workspace.data()};
  CountResult r = countExecuted(k.nativeEntry(c.shape.rows, c.shape.cols), args, 0, rows, kSteps);
  EXPECT_TRUE(r.counts) << r.unavailable;
  return r.counts.value_or(ExecutedInstructions{});
}

TEST(Floor, RowExtrapolationMatchesAWholeSteppedCall) {
  SKIP_WITHOUT_PTRACE();
  // An entry compiled for C = 65: two stepped rows predict all 17 exactly.
  for (const Program &p : {library::rmsNorm(), library::layerNorm()}) {
    Kernel k = compile(p);
    check::Case c = check::makeCase(k.program(), {17, 65});
    ComputeFloorRecord r = measureComputeFloor(k, c);
    ASSERT_TRUE(r.unavailable.empty()) << r.unavailable;
    EXPECT_EQ(r.method, "rows");
    ExecutedInstructions whole = wholeCall(k, c, 17);
    EXPECT_EQ(r.instructions, whole.instructions) << p.name;
    EXPECT_EQ(r.vector, whole.vector) << p.name;
    EXPECT_GT(r.vector, 0);
    EXPECT_LE(r.vector, r.instructions);
    EXPECT_GT(r.clock_hz, 0);
    EXPECT_GT(r.issue_width, 0);
    EXPECT_NEAR(r.seconds, r.vector / r.issue_width / r.clock_hz, 1e-18);
  }
}

TEST(Floor, ColumnExtrapolationMatchesAWholeSteppedCall) {
  SKIP_WITHOUT_PTRACE();
  // The generic entry (C > 1024) at C = 1028: stepped at 260 and 516
  // columns (C's remainder mod 256 kept), extrapolated to 1028, against
  // the call stepped whole at the real C. Vector counts are exact; the
  // total may differ by the next-row prefetches, gated on the row's bytes
  // (docs/bench.md, "The floor").
  // SwiGLU runs a dense call's rows as one row (flatten_rows): its calls
  // are stepped as one row of R x C.
  for (const Program &p : {library::rmsNorm(), library::swiglu(), library::layerNorm()})
    for (auto [rows, method] : {std::pair<int64_t, const char *>{1, "columns"},
                                std::pair<int64_t, const char *>{3, "rows and columns"}}) {
      Kernel k = compile(p);
      check::Case c = check::makeCase(k.program(), {rows, 1028});
      ComputeFloorRecord r = measureComputeFloor(k, c);
      ASSERT_TRUE(r.unavailable.empty()) << r.unavailable;
      bool flat = p.name == "swiglu";
      EXPECT_EQ(r.method, flat ? "columns" : method) << p.name;
      EXPECT_EQ(r.target_rows, flat ? 1 : rows) << p.name;
      ExecutedInstructions whole = wholeCall(k, c, rows);
      EXPECT_EQ(r.vector, whole.vector) << p.name << " " << rows;
      EXPECT_NEAR(r.instructions, whole.instructions, 0.02 * whole.instructions)
          << p.name << " " << rows;
    }
}

TEST(Floor, FlatRowsThroughAnEntryForOneC) {
  SKIP_WITHOUT_PTRACE();
  // SwiGLU at C = 8 (an entry compiled for C = 8, rows flattened): 2000 x 8
  // stepped at 32 + 2000 mod 32 = 48 and 80 rows, extrapolated along rows,
  // against the call stepped whole.
  EXPECT_EQ(planFlatRows(2000, 8).calls,
            (std::vector<std::pair<int64_t, int64_t>>{{8, 48}, {8, 80}}));
  EXPECT_EQ(planFlatRows(40, 8).method, "whole call");
  Kernel k = compile(library::swiglu());
  check::Case c = check::makeCase(k.program(), {2000, 8});
  ComputeFloorRecord r = measureComputeFloor(k, c);
  ASSERT_TRUE(r.unavailable.empty()) << r.unavailable;
  ASSERT_EQ(r.method, "flat rows");
  ExecutedInstructions whole = wholeCall(k, c, 2000);
  EXPECT_EQ(r.vector, whole.vector);
  EXPECT_EQ(r.instructions, whole.instructions);
}

TEST(IssueWidth, TableAndItsFlagOverride) {
  auto cpuinfo = [](const std::string &vendor, int family, int model, const std::string &flags) {
    return "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " +
           std::to_string(family) + "\nmodel\t\t: " + std::to_string(model) +
           "\nflags\t\t: fpu " + flags + "\n";
  };
  EXPECT_EQ(issueWidthFromCpuinfo(cpuinfo("GenuineIntel", 6, 85, "avx512f")).width, 4);
  EXPECT_EQ(issueWidthFromCpuinfo(cpuinfo("GenuineIntel", 6, 106, "avx512f")).width, 5);
  EXPECT_EQ(issueWidthFromCpuinfo(cpuinfo("GenuineIntel", 6, 143, "amx_tile")).width, 6);
  EXPECT_EQ(issueWidthFromCpuinfo(cpuinfo("AuthenticAMD", 25, 17, "avx512f")).width, 6);
  // A hypervisor's Rocket Lake model number beside Sapphire Rapids' AMX.
  IssueWidth vm = issueWidthFromCpuinfo(cpuinfo("GenuineIntel", 6, 167, "avx512f amx_tile"));
  EXPECT_EQ(vm.width, 6);
  EXPECT_NE(vm.source.find("amx_tile"), std::string::npos) << vm.source;
  IssueWidth unknown = issueWidthFromCpuinfo("");
  EXPECT_EQ(unknown.width, 6);
  EXPECT_NE(unknown.source.find("not in the table"), std::string::npos);
}

TEST(CoreClock, SamplesAndTheFastest) {
  std::vector<ClockSample> samples = measureCoreClock(3, 1'000'000);
  ASSERT_EQ(samples.size(), 3u);
  for (const ClockSample &s : samples)
    EXPECT_GT(s.seconds, 0);
  EXPECT_DOUBLE_EQ(clockHz({{1000, 2e-6}, {1000, 1e-6}, {1000, 4e-6}}), 1e9);
  EXPECT_EQ(clockHz({}), 0);
}

TEST(Floor, ABenchRunRecordsItAndTheAuditRederivesIt) {
  SKIP_WITHOUT_PTRACE();
  BenchOptions options;
  options.protocol = {"custom", 0.001, 0.0002, int64_t{1} << 20, 3};
  options.cases = {libraryCase("rmsnorm:5x40"), libraryCase("swiglu:3x1100")};
  options.only = {"lanejit"};
  options.out_dir = fs::temp_directory_path() /
                    ("bench-floor-" + std::to_string(::getpid()));
  fs::remove_all(options.out_dir);
  options.progress = false;
  options.print_table = false;
  options.compile_times = false;
  BenchResult result = runBench(options);
  ASSERT_TRUE(result.record.passed());
  for (const CaseRecord &c : result.record.cases) {
    ASSERT_TRUE(c.floor) << c.id;
    EXPECT_TRUE(c.floor->memory_unavailable.empty()) << c.id;
    EXPECT_TRUE(c.floor->compute.unavailable.empty()) << c.id << c.floor->compute.unavailable;
    EXPECT_GT(c.floor->ratio, 0) << c.id;
  }
  std::ifstream in(result.bundle_dir / "report.md");
  std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("| floor |"), std::string::npos);
  EXPECT_NE(report.find("time \xC3\xB7 floor"), std::string::npos);
#ifdef LANEJIT_HAVE_AUDIT
  audit::AuditResult audited = audit::auditBundle(result.bundle_dir);
  EXPECT_TRUE(audited.pass()) << (audited.failures.empty() ? "" : audited.failures[0]);
#endif
  fs::remove_all(result.bundle_dir);
}

} // namespace
} // namespace lanejit::bench
