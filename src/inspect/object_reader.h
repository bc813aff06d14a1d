// readObject: an object file's functions as decoded instructions.
//
// The only part of src/inspect/ that touches LLVM: it opens the object,
// finds its function symbols, reads the .stack_sizes section, and runs the
// MC disassembler with an Intel-syntax printer over each function. What the
// instructions mean is decided by metrics.cpp, from these plain records.
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
  std::string text; // Intel syntax, e.g. "vmovups zmm0 {k1} {z}, zmmword ptr [rax]"
  bool may_load = false, may_store = false;
  bool is_call = false, is_branch = false, is_return = false;
  // Relative branch/call target, function-relative (may lie outside it).
  std::optional<int64_t> branch_target;
  std::string relocation_symbol; // symbol a relocation inside the bytes names
};

struct DecodedFunction {
  std::string name;
  uint64_t address = 0; // within its section
  uint64_t bytes = 0;
  std::optional<uint64_t> stack_size; // from .stack_sizes, when present
  std::vector<DecodedInstruction> instructions;
};

struct DecodedObject {
  std::string format, triple;
  std::vector<DecodedFunction> functions; // by address
  std::vector<std::string> defined;       // every defined function name
  std::vector<std::string> undefined;     // sorted
};

// Throws Error(Kind::Io) with a clear message on anything it cannot read.
DecodedObject readObject(std::string_view bytes);

} // namespace lanejit::inspect
