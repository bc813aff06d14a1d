#include "jit/elf_relocations.h"

#include <lanejit/error.h>

#include <elf.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace lanejit::jit {
namespace {

[[noreturn]] void refuse(const RelocationKind &kind, const std::string &why) {
  throw Error(Error::Kind::Compile, std::string(kind.name) + ": " + why);
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

template <typename T> T load(const unsigned char *field) {
  T value;
  std::memcpy(&value, field, sizeof(T));
  return value;
}
template <typename T> void store(unsigned char *field, T value) {
  std::memcpy(field, &value, sizeof(T));
}

bool fits(int64_t value, int64_t lowest, int64_t beyond) {
  return value >= lowest && value < beyond;
}

// x86-64 (System V psABI): data fields, no instruction encodings.

constexpr RelocationKind kX86[] = {
    {"R_X86_64_NONE", 0, RelocationTarget::Symbol},
    {"R_X86_64_64", 8, RelocationTarget::Symbol},
    {"R_X86_64_PC32", 4, RelocationTarget::Symbol},
    {"R_X86_64_PLT32", 4, RelocationTarget::Call},
    {"R_X86_64_GOTPCREL", 4, RelocationTarget::GotSlot},
    {"R_X86_64_32", 4, RelocationTarget::Symbol},
    {"R_X86_64_32S", 4, RelocationTarget::Symbol},
    {"R_X86_64_PC64", 8, RelocationTarget::Symbol},
    {"R_X86_64_GOTPCRELX", 4, RelocationTarget::GotSlot},
    {"R_X86_64_REX_GOTPCRELX", 4, RelocationTarget::GotSlot},
};

const RelocationKind *x86Kind(uint32_t type) {
  switch (type) {
  case R_X86_64_NONE: return &kX86[0];
  case R_X86_64_64: return &kX86[1];
  case R_X86_64_PC32: return &kX86[2];
  case R_X86_64_PLT32: return &kX86[3];
  case R_X86_64_GOTPCREL: return &kX86[4];
  case R_X86_64_32: return &kX86[5];
  case R_X86_64_32S: return &kX86[6];
  case R_X86_64_PC64: return &kX86[7];
  case R_X86_64_GOTPCRELX: return &kX86[8];
  case R_X86_64_REX_GOTPCRELX: return &kX86[9];
  default: return nullptr;
  }
}

void applyX86(const RelocationKind &kind, uint32_t type, unsigned char *field, uint64_t place,
              uint64_t value) {
  auto signed32 = [&](int64_t v) {
    if (!fits(v, INT32_MIN, int64_t{INT32_MAX} + 1))
      refuse(kind, "the value " + hex(static_cast<uint64_t>(v)) + " is out of its 32-bit range");
    store(field, static_cast<uint32_t>(v));
  };
  switch (type) {
  case R_X86_64_NONE: return;
  case R_X86_64_64: return store(field, value);
  case R_X86_64_PC64: return store(field, value - place);
  case R_X86_64_PC32:
  case R_X86_64_PLT32:
  case R_X86_64_GOTPCREL:
  case R_X86_64_GOTPCRELX:
  case R_X86_64_REX_GOTPCRELX: return signed32(static_cast<int64_t>(value - place));
  case R_X86_64_32S: return signed32(static_cast<int64_t>(value));
  case R_X86_64_32:
    if (value > UINT32_MAX)
      refuse(kind, "the value " + hex(value) + " is out of its unsigned 32-bit range");
    return store(field, static_cast<uint32_t>(value));
  }
}

// AArch64 (ELF for the Arm 64-bit Architecture, "Relocation operations"):
// X is the operation's result; each instruction relocation writes some of
// its bits into an immediate field after checking the instruction's class.

constexpr RelocationKind kAArch64[] = {
    {"R_AARCH64_NONE", 0, RelocationTarget::Symbol},
    {"R_AARCH64_ABS64", 8, RelocationTarget::Symbol},
    {"R_AARCH64_ABS32", 4, RelocationTarget::Symbol},
    {"R_AARCH64_PREL64", 8, RelocationTarget::Symbol},
    {"R_AARCH64_PREL32", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LD_PREL_LO19", 4, RelocationTarget::Symbol},
    {"R_AARCH64_ADR_PREL_LO21", 4, RelocationTarget::Symbol},
    {"R_AARCH64_ADR_PREL_PG_HI21", 4, RelocationTarget::Symbol},
    {"R_AARCH64_ADR_PREL_PG_HI21_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_ADD_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LDST8_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LDST16_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LDST32_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LDST64_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_LDST128_ABS_LO12_NC", 4, RelocationTarget::Symbol},
    {"R_AARCH64_TSTBR14", 4, RelocationTarget::Symbol},
    {"R_AARCH64_CONDBR19", 4, RelocationTarget::Symbol},
    {"R_AARCH64_JUMP26", 4, RelocationTarget::Call},
    {"R_AARCH64_CALL26", 4, RelocationTarget::Call},
    {"R_AARCH64_ADR_GOT_PAGE", 4, RelocationTarget::GotEntry},
    {"R_AARCH64_LD64_GOT_LO12_NC", 4, RelocationTarget::GotEntry},
};

const RelocationKind *aarch64Kind(uint32_t type) {
  switch (type) {
  case R_AARCH64_NONE: return &kAArch64[0];
  case R_AARCH64_ABS64: return &kAArch64[1];
  case R_AARCH64_ABS32: return &kAArch64[2];
  case R_AARCH64_PREL64: return &kAArch64[3];
  case R_AARCH64_PREL32: return &kAArch64[4];
  case R_AARCH64_LD_PREL_LO19: return &kAArch64[5];
  case R_AARCH64_ADR_PREL_LO21: return &kAArch64[6];
  case R_AARCH64_ADR_PREL_PG_HI21: return &kAArch64[7];
  case R_AARCH64_ADR_PREL_PG_HI21_NC: return &kAArch64[8];
  case R_AARCH64_ADD_ABS_LO12_NC: return &kAArch64[9];
  case R_AARCH64_LDST8_ABS_LO12_NC: return &kAArch64[10];
  case R_AARCH64_LDST16_ABS_LO12_NC: return &kAArch64[11];
  case R_AARCH64_LDST32_ABS_LO12_NC: return &kAArch64[12];
  case R_AARCH64_LDST64_ABS_LO12_NC: return &kAArch64[13];
  case R_AARCH64_LDST128_ABS_LO12_NC: return &kAArch64[14];
  case R_AARCH64_TSTBR14: return &kAArch64[15];
  case R_AARCH64_CONDBR19: return &kAArch64[16];
  case R_AARCH64_JUMP26: return &kAArch64[17];
  case R_AARCH64_CALL26: return &kAArch64[18];
  case R_AARCH64_ADR_GOT_PAGE: return &kAArch64[19];
  case R_AARCH64_LD64_GOT_LO12_NC: return &kAArch64[20];
  default: return nullptr;
  }
}

// Instruction classes (Arm ARM, "A64 Instruction Set Encoding"): the
// patched field is only where the relocation says for these.
struct InstructionClass {
  uint32_t mask, match;
  const char *name;
};
constexpr InstructionClass kAdrp{0x9f000000, 0x90000000, "an ADRP"};
constexpr InstructionClass kAdr{0x9f000000, 0x10000000, "an ADR"};
// ADD or ADDS (immediate), 32 or 64 bits, unshifted (sh = 0).
constexpr InstructionClass kAddImmediate{0x5fc00000, 0x11000000, "an unshifted ADD immediate"};
// LDR/STR/PRFM (unsigned immediate), general or SIMD&FP registers.
constexpr InstructionClass kLoadStore{0x3b000000, 0x39000000,
                                      "a load or store with an unsigned immediate"};
constexpr InstructionClass kLoadLiteral{0x3b000000, 0x18000000, "a load of a literal"};
constexpr InstructionClass kBranch{0x7c000000, 0x14000000, "a B or BL"};
constexpr InstructionClass kCondBranch{0xff000010, 0x54000000, "a B.cond"};
constexpr InstructionClass kCompareBranch{0x7e000000, 0x34000000, "a CBZ or CBNZ"};
constexpr InstructionClass kTestBranch{0x7e000000, 0x36000000, "a TBZ or TBNZ"};

bool is(uint32_t insn, const InstructionClass &c) { return (insn & c.mask) == c.match; }

void expect(const RelocationKind &kind, uint32_t insn, const InstructionClass &c) {
  if (!is(insn, c))
    refuse(kind, "the instruction " + hex(insn) + " is not " + c.name);
}

// Replaces `bits` bits at `shift` of `insn` with the low bits of `value`.
uint32_t withField(uint32_t insn, int shift, int bits, int64_t value) {
  uint32_t mask = ((uint32_t{1} << bits) - 1) << shift;
  return (insn & ~mask) | ((static_cast<uint32_t>(value) << shift) & mask);
}

// ADR and ADRP: immlo (bits 30:29) and immhi (23:5) of a 21-bit immediate.
uint32_t withAdrImmediate(uint32_t insn, int64_t imm21) {
  return withField(withField(insn, 29, 2, imm21), 5, 19, imm21 >> 2);
}

// log2 of the bytes a load/store (unsigned immediate) accesses: its
// immediate counts units of that size. SIMD&FP: opc bit 1 marks 128 bits.
int accessScale(uint32_t insn) {
  int size = static_cast<int>(insn >> 30);
  bool simd = insn & (1u << 26);
  return simd && (insn & (1u << 23)) ? 4 : size;
}

// A PC-relative branch or literal of `bits` bits counting words.
int64_t wordOffset(const RelocationKind &kind, int64_t x, int bits) {
  int64_t reach = int64_t{1} << (bits + 1); // bytes either side
  if (x % 4 != 0)
    refuse(kind, "the offset " + std::to_string(x) + " is not a multiple of 4");
  if (!fits(x, -reach, reach))
    refuse(kind, "the offset " + std::to_string(x) + " is out of range (+-" +
                     std::to_string(reach) + " bytes)");
  return x >> 2;
}

// The low 12 bits of `value` for a load/store of 1 << scale bytes.
int64_t scaledLow12(const RelocationKind &kind, uint32_t insn, uint64_t value, int scale) {
  expect(kind, insn, kLoadStore);
  if (accessScale(insn) != scale)
    refuse(kind, "the instruction " + hex(insn) + " accesses " +
                     std::to_string(1 << accessScale(insn)) + " bytes, not " +
                     std::to_string(1 << scale));
  uint64_t low = value & 0xfff;
  if (low & ((uint64_t{1} << scale) - 1))
    refuse(kind, "the address " + hex(value) + " is not aligned to " + std::to_string(1 << scale) +
                     " bytes");
  return static_cast<int64_t>(low >> scale);
}

void applyAArch64(const RelocationKind &kind, uint32_t type, unsigned char *field, uint64_t place,
                  uint64_t value) {
  const auto x = static_cast<int64_t>(value - place); // S + A - P
  const int64_t two32 = int64_t{1} << 32;
  switch (type) {
  case R_AARCH64_NONE: return;
  case R_AARCH64_ABS64: return store(field, value);
  case R_AARCH64_PREL64: return store(field, value - place);
  case R_AARCH64_ABS32:
  case R_AARCH64_PREL32: {
    // Either a signed or an unsigned 32-bit value.
    int64_t v = type == R_AARCH64_ABS32 ? static_cast<int64_t>(value) : x;
    if (!fits(v, -(two32 / 2), two32))
      refuse(kind, "the value " + hex(static_cast<uint64_t>(v)) + " is out of its 32-bit range");
    return store(field, static_cast<uint32_t>(v));
  }
  default: break;
  }
  uint32_t insn = load<uint32_t>(field);
  switch (type) {
  case R_AARCH64_ADR_PREL_PG_HI21:
  case R_AARCH64_ADR_PREL_PG_HI21_NC:
  case R_AARCH64_ADR_GOT_PAGE: {
    expect(kind, insn, kAdrp);
    // Page(S + A) - Page(P).
    auto pages = static_cast<int64_t>((value & ~uint64_t{0xfff}) - (place & ~uint64_t{0xfff}));
    if (type != R_AARCH64_ADR_PREL_PG_HI21_NC && !fits(pages, -two32, two32))
      refuse(kind,
             "the page offset " + std::to_string(pages) + " is out of ADRP's range (+-4 GiB)");
    insn = withAdrImmediate(insn, pages >> 12);
    break;
  }
  case R_AARCH64_ADR_PREL_LO21:
    expect(kind, insn, kAdr);
    if (!fits(x, -(int64_t{1} << 20), int64_t{1} << 20))
      refuse(kind, "the offset " + std::to_string(x) + " is out of ADR's range (+-1 MiB)");
    insn = withAdrImmediate(insn, x);
    break;
  case R_AARCH64_ADD_ABS_LO12_NC:
    expect(kind, insn, kAddImmediate);
    insn = withField(insn, 10, 12, static_cast<int64_t>(value & 0xfff));
    break;
  case R_AARCH64_LDST8_ABS_LO12_NC:
    insn = withField(insn, 10, 12, scaledLow12(kind, insn, value, 0));
    break;
  case R_AARCH64_LDST16_ABS_LO12_NC:
    insn = withField(insn, 10, 12, scaledLow12(kind, insn, value, 1));
    break;
  case R_AARCH64_LDST32_ABS_LO12_NC:
    insn = withField(insn, 10, 12, scaledLow12(kind, insn, value, 2));
    break;
  case R_AARCH64_LDST64_ABS_LO12_NC:
  case R_AARCH64_LD64_GOT_LO12_NC:
    insn = withField(insn, 10, 12, scaledLow12(kind, insn, value, 3));
    break;
  case R_AARCH64_LDST128_ABS_LO12_NC:
    insn = withField(insn, 10, 12, scaledLow12(kind, insn, value, 4));
    break;
  case R_AARCH64_CALL26:
  case R_AARCH64_JUMP26:
    expect(kind, insn, kBranch);
    insn = withField(insn, 0, 26, wordOffset(kind, x, 26));
    break;
  case R_AARCH64_CONDBR19:
    if (!is(insn, kCondBranch) && !is(insn, kCompareBranch))
      refuse(kind, "the instruction " + hex(insn) + " is not a B.cond, CBZ or CBNZ");
    insn = withField(insn, 5, 19, wordOffset(kind, x, 19));
    break;
  case R_AARCH64_LD_PREL_LO19:
    expect(kind, insn, kLoadLiteral);
    insn = withField(insn, 5, 19, wordOffset(kind, x, 19));
    break;
  case R_AARCH64_TSTBR14:
    expect(kind, insn, kTestBranch);
    insn = withField(insn, 5, 14, wordOffset(kind, x, 14));
    break;
  }
  store(field, insn);
}

} // namespace

const RelocationKind *relocationKind(uint16_t machine, uint32_t type) {
  switch (machine) {
  case EM_X86_64: return x86Kind(type);
  case EM_AARCH64: return aarch64Kind(type);
  default: return nullptr;
  }
}

const char *machineName(uint16_t machine) {
  switch (machine) {
  case EM_X86_64: return "x86-64";
  case EM_AARCH64: return "AArch64";
  default: return "an unknown machine";
  }
}

void applyRelocation(uint16_t machine, uint32_t type, unsigned char *field, uint64_t place,
                     uint64_t value) {
  const RelocationKind *kind = relocationKind(machine, type);
  if (!kind)
    throw Error(Error::Kind::Compile, std::string(machineName(machine)) + " relocation type " +
                                          std::to_string(type) + " is not supported");
  if (machine == EM_X86_64)
    applyX86(*kind, type, field, place, value);
  else
    applyAArch64(*kind, type, field, place, value);
}

std::array<unsigned char, kImportStubBytes> importStub(uint16_t machine, uint64_t address) {
  std::array<unsigned char, kImportStubBytes> stub{};
  if (machine == EM_AARCH64) {
    // ldr x16, #8; br x16; .quad address (x16 is the intra-procedure-call
    // scratch register, free at a call).
    store(stub.data(), uint32_t{0x58000050});
    store(stub.data() + 4, uint32_t{0xd61f0200});
  } else {
    // jmp *0(%rip); .quad address; padding.
    stub[0] = 0xff;
    stub[1] = 0x25;
  }
  std::memcpy(stub.data() + (machine == EM_AARCH64 ? 8 : 6), &address, 8);
  return stub;
}

} // namespace lanejit::jit
