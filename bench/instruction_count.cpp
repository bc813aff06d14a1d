// Counting a call's executed instructions by single-stepping it
// (bench/instruction_count.h).
#include "instruction_count.h"

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lanejit::bench {
namespace {

// The MC objects that decode x86-64, set up once. No CPU or features: the
// x86 decoder accepts every encoding (AVX-512 included) regardless.
struct Decoder {
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> decoder;

  Decoder() {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    const std::string triple = "x86_64-unknown-linux-gnu";
    std::string problem;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, problem);
    if (!target)
      return;
    llvm::MCTargetOptions options;
    registers.reset(target->createMCRegInfo(triple));
    asm_info.reset(target->createMCAsmInfo(*registers, triple, options));
    subtarget.reset(target->createMCSubtargetInfo(triple, "", ""));
    if (!registers || !asm_info || !subtarget)
      return;
    context = std::make_unique<llvm::MCContext>(llvm::Triple(triple), asm_info.get(),
                                                registers.get(), subtarget.get());
    decoder.reset(target->createMCDisassembler(*subtarget, *context));
  }
};

Decoder &decoder() {
  static Decoder d;
  return d;
}

bool isVectorRegister(llvm::StringRef name) {
  return name.starts_with("XMM") || name.starts_with("YMM") || name.starts_with("ZMM") ||
         (name.size() <= 3 && name.starts_with("K") && name.size() > 1 &&
          name[1] >= '0' && name[1] <= '7');
}

// The child: stop for the tracer, make the one call, leave. Only
// async-signal-safe work after fork (the parent may have other threads).
[[noreturn]] void childCall(NativeEntry entry, const LaunchArgs &args, int64_t begin,
                            int64_t end) {
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0)
    _exit(64 + (errno & 63)); // the parent turns this back into errno
  raise(SIGSTOP);
  entry(&args, begin, end);
  _exit(0);
}

std::optional<uint64_t> peekUser(pid_t pid, size_t offset) {
  errno = 0;
  long value = ptrace(PTRACE_PEEKUSER, pid, reinterpret_cast<void *>(offset), nullptr);
  if (errno != 0)
    return std::nullopt;
  return static_cast<uint64_t>(value);
}

std::optional<uint64_t> peekData(pid_t pid, uint64_t address) {
  errno = 0;
  long value = ptrace(PTRACE_PEEKDATA, pid, reinterpret_cast<void *>(address), nullptr);
  if (errno != 0)
    return std::nullopt;
  return static_cast<uint64_t>(value);
}

// The child's instruction at `rip`, from the child's memory (the parent's
// copy would do, but reading the child cannot fault on a short mapping).
std::optional<bool> classify(pid_t pid, uint64_t rip) {
  uint8_t bytes[16];
  size_t size = 0;
  for (uint64_t offset : {0, 8}) {
    std::optional<uint64_t> word = peekData(pid, rip + offset);
    if (!word)
      break;
    std::memcpy(bytes + offset, &*word, 8);
    size += 8;
  }
  return isVectorInstruction(bytes, size);
}

void killChild(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// waitpid, retried on EINTR.
bool waitFor(pid_t pid, int &status) {
  for (;;) {
    if (waitpid(pid, &status, 0) == pid)
      return true;
    if (errno != EINTR)
      return false;
  }
}

CountResult unavailable(std::string why) {
  return CountResult{std::nullopt, std::move(why)};
}

} // namespace

std::optional<bool> isVectorInstruction(const uint8_t *bytes, size_t size) {
  Decoder &d = decoder();
  if (!d.decoder || size == 0)
    return std::nullopt;
  // One decoder shared by the bench's threads: MC decoding is not
  // documented as thread-safe.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::MCInst inst;
  uint64_t length = 0;
  llvm::ArrayRef<uint8_t> data(bytes, std::min<size_t>(size, 15));
  if (d.decoder->getInstruction(inst, length, data, 0, llvm::nulls()) !=
      llvm::MCDisassembler::Success)
    return std::nullopt;
  for (const llvm::MCOperand &op : inst)
    if (op.isReg() && op.getReg() && isVectorRegister(d.registers->getName(op.getReg())))
      return true;
  return false;
}

CountResult countExecuted(NativeEntry entry, const LaunchArgs &args, int64_t row_begin,
                          int64_t row_end, int64_t max_steps) {
#if !defined(__x86_64__)
  return unavailable("instruction counting is implemented for x86-64 only");
#else
  if (!decoder().decoder)
    return unavailable("LLVM has no x86-64 disassembler in this build");
  pid_t pid = fork();
  if (pid < 0)
    return unavailable(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0)
    childCall(entry, args, row_begin, row_end);

  int status = 0;
  if (!waitFor(pid, status))
    return unavailable(fmt::format("waitpid failed: {}", std::strerror(errno)));
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    return unavailable(code >= 64 ? fmt::format("ptrace(PTRACE_TRACEME) refused: {}",
                                                std::strerror(code - 64))
                                  : fmt::format("the child exited with {}", code));
  }
  if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP) {
    killChild(pid);
    return unavailable("the child did not stop for the tracer");
  }

  const uint64_t start = reinterpret_cast<uint64_t>(entry);
  const size_t rip_at = offsetof(user_regs_struct, rip), rsp_at = offsetof(user_regs_struct, rsp);
  std::unordered_map<uint64_t, bool> vector_at; // each address decoded once
  ExecutedInstructions counts;
  bool inside = false;
  uint64_t return_to = 0, entry_rsp = 0;
  for (int64_t steps = 0;; ++steps) {
    std::optional<uint64_t> rip = peekUser(pid, rip_at);
    if (!rip) {
      killChild(pid);
      return unavailable(fmt::format("cannot read the child's registers: {}",
                                     std::strerror(errno)));
    }
    if (!inside && *rip == start) {
      // At the entry's first instruction [rsp] holds the return address;
      // the call is over when rip reaches it with that frame popped.
      std::optional<uint64_t> rsp = peekUser(pid, rsp_at);
      std::optional<uint64_t> back = rsp ? peekData(pid, *rsp) : std::nullopt;
      if (!back) {
        killChild(pid);
        return unavailable("cannot read the entry's return address");
      }
      inside = true;
      entry_rsp = *rsp;
      return_to = *back;
    } else if (inside && *rip == return_to) {
      std::optional<uint64_t> rsp = peekUser(pid, rsp_at);
      if (rsp && *rsp == entry_rsp + 8)
        break;
    }
    if (inside) {
      auto known = vector_at.find(*rip);
      if (known == vector_at.end()) {
        std::optional<bool> vector = classify(pid, *rip);
        if (!vector) {
          killChild(pid);
          return unavailable(fmt::format("an instruction at {:#x} does not decode", *rip));
        }
        known = vector_at.emplace(*rip, *vector).first;
      }
      ++counts.instructions;
      counts.vector += known->second ? 1 : 0;
    }
    if (steps >= max_steps) {
      killChild(pid);
      return unavailable(fmt::format("over {} steps (the step budget)", max_steps));
    }
    if (ptrace(PTRACE_SINGLESTEP, pid, nullptr, nullptr) != 0) {
      int error = errno;
      killChild(pid);
      return unavailable(fmt::format("ptrace(PTRACE_SINGLESTEP) failed: {}", std::strerror(error)));
    }
    if (!waitFor(pid, status) || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
      bool exited = WIFEXITED(status) || WIFSIGNALED(status);
      if (!exited)
        killChild(pid);
      return unavailable(
          WIFSTOPPED(status)
              ? fmt::format("the child stopped on signal {} at step {}", WSTOPSIG(status), steps)
              : "the child ended before the call returned");
    }
  }
  killChild(pid);
  return CountResult{counts, ""};
#endif
}

} // namespace lanejit::bench
