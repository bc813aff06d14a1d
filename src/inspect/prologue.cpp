#include "inspect/prologue.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

namespace lanejit::inspect {
namespace {

bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The immediate after `prefix` ("sub rsp, 200"), or nothing for a register.
std::optional<int64_t> immediate(const std::string &text, size_t prefix) {
  const char *begin = text.c_str() + prefix;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(begin, &end, 0);
  if (end == begin || *end != '\0' || errno != 0)
    return std::nullopt;
  return value;
}

// "mov rsp, rbp", "lea rsp, [r10 - 8]", "add rsp, 16": the epilogue's kind.
bool writesRsp(const std::string &text, const std::string &mnemonic) {
  return text.compare(mnemonic.size(), 5, " rsp,") == 0;
}

PrologueFrame readAArch64Prologue(const DecodedFunction &fn) {
  PrologueFrame frame;
  bool begun = false;
  for (const DecodedInstruction &inst : fn.instructions) {
    const std::string &t = inst.text;
    size_t pre = t.find("[sp, #-");
    if (inst.may_store && pre != std::string::npos && t.ends_with("]!")) {
      frame.bytes += std::strtoll(t.c_str() + pre + 7, nullptr, 0);
      begun = true;
    } else if (startsWith(t, "sub sp, sp, ")) {
      if (t.compare(12, 1, "#") != 0)
        return PrologueFrame{-1, 0};
      char *end = nullptr;
      int64_t n = std::strtoll(t.c_str() + 13, &end, 0);
      if (std::string(end) == ", lsl #12")
        n *= 4096;
      frame.bytes += n;
      begun = true;
    } else if (inst.is_call || inst.is_return || (inst.is_branch && begun)) {
      return frame;
    }
  }
  return frame;
}

} // namespace

PrologueFrame readPrologue(const DecodedFunction &fn, Arch arch) {
  if (arch == Arch::AArch64)
    return readAArch64Prologue(fn);
  PrologueFrame frame;
  bool begun = false;
  for (const DecodedInstruction &inst : fn.instructions) {
    const std::string &t = inst.text;
    std::string mnemonic = t.substr(0, t.find(' '));
    if (mnemonic == "push") {
      frame.bytes += 8;
      begun = true;
    } else if (startsWith(t, "sub rsp, ")) {
      auto n = immediate(t, 9);
      frame.bytes = n ? frame.bytes + *n : -1;
      return frame;
    } else if (startsWith(t, "add rsp, ") && immediate(t, 9).value_or(0) < 0) {
      // "add rsp, -128": the same as "sub rsp, 128", one byte shorter.
      frame.bytes -= *immediate(t, 9);
      return frame;
    } else if (startsWith(t, "and rsp, ")) {
      auto mask = immediate(t, 9);
      frame.alignment = mask && *mask < 0 ? -*mask : 0;
      begun = true;
    } else if (inst.is_call || mnemonic == "pop" || writesRsp(t, mnemonic)) {
      return frame;
    } else if (inst.is_branch || inst.is_return) {
      bool conditional = inst.is_branch && mnemonic != "jmp" && inst.branch_target;
      if (begun || !(conditional || inst.is_return))
        return frame;
    }
  }
  return frame;
}

} // namespace lanejit::inspect
