// Shared objects as a C++ compiler links them (a TorchInductor kernel's
// .so): functions from the symbol table, calls named through the PLT and
// GOT, frames from g++'s prologues, and the function filter.
#include <lanejit/error.h>
#include <lanejit/inspect.h>

#include "inspect/shared_object_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace lanejit {
namespace {

using inspect::FunctionReport;
using inspect::ObjectReport;

const FunctionReport *find(const ObjectReport &r, const std::string &name) {
  for (const FunctionReport &f : r.functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

const FunctionReport &function(const ObjectReport &r, const std::string &name) {
  const FunctionReport *f = find(r, name);
  if (!f) {
    ADD_FAILURE() << "no function " << name << " in\n" << inspect::toText(r);
    return r.functions.at(0);
  }
  return *f;
}

bool imports(const ObjectReport &r, const std::string &name) {
  return std::find(r.undefined.begin(), r.undefined.end(), name) != r.undefined.end();
}

// The C++ kernel (shared_object_builder.h): compiler output, so its
// properties are checked, not its counts.
class InspectSharedObject : public ::testing::Test {
protected:
  static std::string object_;
  static void SetUpTestSuite() {
    if (!test::haveCxx())
      return;
    test::ScratchDir scratch("lanejit_inspect_so");
    object_ = test::buildSharedObject(scratch, "kernel", "cpp", test::kKernelSource,
                                      test::kKernelFlags);
  }
  void SetUp() override {
    if (!test::haveCxx())
      GTEST_SKIP() << "no C++ compiler (c++) to build a shared object";
    ASSERT_FALSE(object_.empty()) << "c++ " << test::kKernelFlags << " failed";
  }
};
std::string InspectSharedObject::object_;

TEST_F(InspectSharedObject, ReadsEveryFunctionOfTheSharedObject) {
  ObjectReport r = inspect::inspectObject(object_);
  EXPECT_EQ(r.kind, "shared object");
  EXPECT_NE(find(r, "kernel"), nullptr) << inspect::toText(r);
  EXPECT_NE(find(r, "unrelated"), nullptr) << inspect::toText(r);
  EXPECT_NE(inspect::toText(r).find(", shared object\n"), std::string::npos) << inspect::toText(r);
}

TEST_F(InspectSharedObject, TheFilterKeepsOnlyTheNamedFunction) {
  ObjectReport r = inspect::inspectObject(object_, {"kernel"});
  ASSERT_NE(find(r, "kernel"), nullptr) << inspect::toText(r);
  // Parts GCC split off it (kernel.cold) may come along; nothing else.
  for (const FunctionReport &f : r.functions)
    EXPECT_TRUE(f.name == "kernel" || f.name.rfind("kernel.", 0) == 0) << f.name;
  EXPECT_EQ(find(r, "unrelated"), nullptr);
  EXPECT_FALSE(r.undefined.empty()) << "imports are the object's, not the functions'";

  ObjectReport both = inspect::inspectObject(object_, {"unrelated", "kernel"});
  EXPECT_NE(find(both, "kernel"), nullptr);
  EXPECT_NE(find(both, "unrelated"), nullptr);
  std::string listing = inspect::disassemble(object_, {"unrelated"});
  EXPECT_EQ(listing.rfind("unrelated:", 0), 0u) << listing;
  EXPECT_EQ(listing.find("kernel:"), std::string::npos) << listing;
}

TEST_F(InspectSharedObject, TheKernelsHotLoopIsVisible) {
  ObjectReport r = inspect::inspectObject(object_, {"kernel"});
  const FunctionReport &k = function(r, "kernel");
  // expf, or the vector variant the compiler picked: named through the PLT,
  // imported, not this object's.
  bool namedExp = false;
  for (const inspect::CallSite &c : k.calls) {
    EXPECT_NE(c.target.rfind("0x", 0), 0u) << "an unnamed target\n" << inspect::toText(r);
    if (c.target.find("expf") != std::string::npos && c.target != "indirect") {
      namedExp = true;
      EXPECT_FALSE(c.internal) << c.target;
      EXPECT_TRUE(imports(r, c.target)) << c.target << "\n" << inspect::toText(r);
    }
  }
  EXPECT_TRUE(namedExp) << inspect::toText(r);
  EXPECT_TRUE(std::any_of(k.loops.begin(), k.loops.end(),
                          [](const inspect::Loop &l) { return l.innermost; }))
      << inspect::toText(r);
  // -mavx512f -mprefer-vector-width=512 asks for zmm; any vector counts.
  EXPECT_GE(k.vector_bits, 256) << inspect::toText(r);
  EXPECT_EQ(k.stack_source, "prologue") << inspect::toText(r);
  EXPECT_GE(k.stack_frame, 8) << "at least the frame pointer's push\n" << inspect::toText(r);
}

TEST_F(InspectSharedObject, AMissingFunctionIsNamed) {
  try {
    inspect::inspectObject(object_, {"kernel", "no_such_kernel"});
    ADD_FAILURE() << "a missing function was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    std::string message = e.what();
    EXPECT_EQ(message.rfind("no function 'no_such_kernel' in the object; it defines ", 0), 0u)
        << message;
    EXPECT_NE(message.find("kernel"), std::string::npos) << message;
  }
  // A prefix of a name is not the name.
  EXPECT_THROW(inspect::inspectObject(object_, {"kern"}), Error);
  EXPECT_THROW(inspect::disassemble(object_, {"no_such_kernel"}), Error);
}

// Hand-written prologues and calls, assembled and linked by the driver: the
// frame and target of each are known exactly. The forms are g++'s:
// frame pointer then realignment, the DRAP form (a realigned frame with
// the return address copied above it), and a shrink-wrapped early exit
// with "add rsp, -128" for "sub rsp, 128".
const char *kPrologues = R"(
  .intel_syntax noprefix
  .text
  .globl realigned
  .type realigned, @function
realigned:
  push rbp
  mov rbp, rsp
  push r15
  push r14
  and rsp, -64
  sub rsp, 192
  call expf@PLT
  lea rsp, [rbp - 16]
  pop r14
  pop r15
  pop rbp
  ret
  .size realigned, .-realigned
  .globl drap
  .type drap, @function
drap:
  lea r10, [rsp + 8]
  and rsp, -64
  push qword ptr [r10 - 8]
  push rbp
  mov rbp, rsp
  push r12
  mov r12, rdi
  push r10
  push rbx
  sub rsp, 16
  call qword ptr [rip + logf@GOTPCREL]
  add rsp, 16
  pop rbx
  pop r10
  pop r12
  pop rbp
  lea rsp, [r10 - 8]
  ret
  .size drap, .-drap
  .globl shrinkwrapped
  .type shrinkwrapped, @function
shrinkwrapped:
  test rdi, rdi
  jle 1f
  push rbp
  mov rbp, rsp
  push rbx
  add rsp, -128
  call realigned@PLT
  sub rsp, -128
  pop rbx
  pop rbp
1:
  ret
  .size shrinkwrapped, .-shrinkwrapped
  .section .note.GNU-stack,"",@progbits
)";

class Prologues : public ::testing::TestWithParam<const char *> {};

TEST_P(Prologues, FramesAndTargetsAreExact) {
  if (!test::haveCxx())
    GTEST_SKIP() << "no C++ compiler (c++) to build a shared object";
  test::ScratchDir scratch("lanejit_inspect_prologues");
  std::string object = test::buildSharedObject(scratch, "prologues", "s", kPrologues,
                                               std::string("-shared ") + GetParam());
  ASSERT_FALSE(object.empty()) << "c++ -shared " << GetParam() << " failed";
  ObjectReport r = inspect::inspectObject(object, {"realigned", "drap", "shrinkwrapped"});
  ASSERT_EQ(r.functions.size(), 3u) << inspect::toText(r);

  const FunctionReport &realigned = function(r, "realigned");
  EXPECT_EQ(realigned.stack_source, "prologue");
  EXPECT_EQ(realigned.stack_frame, 3 * 8 + 192) << inspect::toText(r);
  EXPECT_EQ(realigned.stack_alignment, 64);
  const FunctionReport &drap = function(r, "drap");
  EXPECT_EQ(drap.stack_frame, 5 * 8 + 16) << inspect::toText(r);
  EXPECT_EQ(drap.stack_alignment, 64);
  const FunctionReport &wrapped = function(r, "shrinkwrapped");
  EXPECT_EQ(wrapped.stack_frame, 2 * 8 + 128) << inspect::toText(r);
  EXPECT_EQ(wrapped.stack_alignment, 0);

  // Through .plt (or .plt.sec) to an import; through a GOT slot (-fno-plt);
  // through the PLT to a function this object exports itself.
  auto onlyCall = [&](const FunctionReport &f) {
    EXPECT_EQ(f.calls.size(), 1u) << inspect::toText(r);
    return f.calls.empty() ? inspect::CallSite{} : f.calls[0];
  };
  EXPECT_EQ(onlyCall(realigned).target, "expf");
  EXPECT_FALSE(onlyCall(realigned).internal);
  EXPECT_EQ(onlyCall(drap).target, "logf");
  EXPECT_EQ(onlyCall(wrapped).target, "realigned");
  EXPECT_TRUE(onlyCall(wrapped).internal);
  EXPECT_TRUE(imports(r, "expf") && imports(r, "logf")) << inspect::toText(r);
  EXPECT_FALSE(imports(r, "realigned"));
  EXPECT_NE(inspect::toText(r).find("realigned to 64 bytes"), std::string::npos);
}

// Lazy .plt entries; IBT's .plt.sec beside them; stripped: no .symtab, the
// functions from .dynsym.
INSTANTIATE_TEST_SUITE_P(Inspect, Prologues,
                         ::testing::Values("", "-Wl,-z,ibtplt", "-s"));

} // namespace
} // namespace lanejit
