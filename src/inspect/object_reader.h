// readObject: an object file's functions as decoded instructions.
//
// With disassembler.cpp and plt.cpp, the only part of src/inspect/ that
// touches LLVM: it opens the object (relocatable, or linked: a shared object
// or executable), finds its function symbols, reads the .stack_sizes
// section, runs the MC disassembler over each function (x86-64: Intel
// syntax; AArch64: LLVM's generic syntax) and names what its calls reach.
// What the instructions mean is decided by metrics.cpp, from these plain
// records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit::inspect {

struct DecodedInstruction {
  uint64_t offset = 0; // from the function start
  uint64_t size = 0;
  // x86-64: Intel syntax, "vmovups zmm0 {k1} {z}, zmmword ptr [rax]";
  // AArch64: "ldp q0, q1, [x8], #32"
  std::string text;
  bool may_load = false, may_store = false;
  bool is_call = false, is_branch = false, is_return = false;
  // Control may reach the next instruction (not after b, jmp, ret, br).
  bool falls_through = true;
  // Relative branch/call target, function-relative (may lie outside it).
  std::optional<int64_t> branch_target;
  std::string relocation_symbol; // symbol a relocation inside the bytes names
  // What a call, or a branch leaving the function, reaches: a symbol (the
  // relocation's, the PLT entry's or GOT slot's, or the function the target
  // lies in), else the target's address in hex; "" when indirect.
  std::string target;
};

struct DecodedFunction {
  std::string name;
  // The symbol's value: the offset in its section in a relocatable object,
  // the virtual address in a linked one.
  uint64_t address = 0;
  uint64_t bytes = 0;
  std::optional<uint64_t> stack_size; // from .stack_sizes, when present
  std::vector<DecodedInstruction> instructions;
  std::string code; // the function's bytes, for llvm-mca (mca.h)
};

enum class Arch { X86_64, AArch64 };

struct DecodedObject {
  std::string format, triple;
  std::string kind; // "relocatable", "shared object" or "executable"
  Arch arch = Arch::X86_64;
  std::vector<DecodedFunction> functions; // by address
  std::vector<std::string> defined;       // every defined function name
  // Imports, sorted: the undefined symbols (of .dynsym when linked).
  std::vector<std::string> undefined;
};

// Throws Error(Kind::Io) with a clear message on anything it cannot read.
DecodedObject readObject(std::string_view bytes);

} // namespace lanejit::inspect
