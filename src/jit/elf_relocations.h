// The arithmetic of the ELF relocations the object loader (object_loader.h)
// applies, per machine: x86-64 and AArch64 (small code model, PIC). Pure
// functions of bytes and addresses, so the AArch64 encodings are tested on
// any host (tests/jit/object_loader_aarch64_test.cpp) and the loader only
// decides which address a relocation means. Uses only <elf.h>'s numbers: it
// builds without LLVM, like the loader.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace lanejit::jit {

// The address a relocation's arithmetic starts from, chosen by the loader.
enum class RelocationTarget {
  // The symbol's address (S).
  Symbol,
  // A call: an import's stub beside the code (imports are out of branch
  // range), else the symbol.
  Call,
  // The import's GOT slot plus the addend (x86-64: G + GOT + A).
  GotSlot,
  // The GOT entry holding S + A (AArch64's GDAT(S + A)): the loader's slots
  // hold S, so only a zero addend is one of them.
  GotEntry,
};

struct RelocationKind {
  const char *name; // "R_AARCH64_CALL26"
  uint8_t width;    // bytes patched at the place (0: none)
  RelocationTarget target;
};

// Relocation `type` of `machine` (EM_X86_64 or EM_AARCH64), or nullptr when
// the loader does not apply it.
const RelocationKind *relocationKind(uint16_t machine, uint32_t type);

// "x86-64", "AArch64", or the number.
const char *machineName(uint16_t machine);

// Applies relocation `type` to the `width` bytes at `field` (the data or
// instruction at address `place`) for `value`, the target's address plus
// the addend (S + A, or the stub's, slot's or entry's address). Instruction
// fields are replaced, the rest of the instruction kept. Throws
// Error(Kind::Compile) naming the relocation when `type` is unknown, the
// value is out of the field's range, a scaled offset is misaligned, or the
// instruction is not one the relocation patches.
void applyRelocation(uint16_t machine, uint32_t type, unsigned char *field, uint64_t place,
                     uint64_t value);

// An import's stub: code that jumps to `address` from anywhere, placed
// beside the kernel's code so that its calls reach it.
inline constexpr size_t kImportStubBytes = 16;
std::array<unsigned char, kImportStubBytes> importStub(uint16_t machine, uint64_t address);

} // namespace lanejit::jit
