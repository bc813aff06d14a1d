// The object loader's AArch64 side, checked on any host: its relocation
// arithmetic (elf_relocations.h) against instruction words encoded by hand
// (and cross-checked with llvm-mc), the relocation kinds lanejit's aarch64
// kernels contain, and what loadObjectFor writes for them (decoded back to
// the addresses each patched instruction reaches). Running the loaded code
// happens under qemu-user in tests/cross.
#include "jit/elf_relocations.h"
#include "jit/object_loader.h"

#include "support/command_line.h"
#include "support/testing.h"

#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace lanejit::jit {
namespace {

// ---- The arithmetic, one relocation at a time ------------------------------

struct Patched {
  uint32_t word = 0;
  std::string error; // "" when applied
};

Patched applied(uint32_t type, uint32_t word, uint64_t place, uint64_t value) {
  unsigned char field[4];
  std::memcpy(field, &word, 4);
  Patched out;
  try {
    applyRelocation(EM_AARCH64, type, field, place, value);
    std::memcpy(&out.word, field, 4);
  } catch (const Error &e) {
    out.error = e.what();
  }
  return out;
}

struct Encoding {
  const char *what;
  uint32_t type;
  uint32_t before; // the instruction as the object holds it (immediate 0)
  uint64_t place, value;
  uint32_t after; // llvm-mc's encoding of the instruction `what` names
};

TEST(ObjectLoaderAArch64, InstructionFieldsMatchHandEncodings) {
  // Before: instruction words with a zero immediate, a place and a target
  // (S + A). Expected: the word with the immediate the relocation means;
  // each `after` is llvm-mc's encoding of `what` (ADRP and branches are
  // relative to the place, so `what` names the offset).
  const Encoding cases[] = {
      {"adrp x0, 0x344000", R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 0x100001234, 0x100345678,
       0x90001a20},
      {"adrp x3, -0x102000", R_AARCH64_ADR_PREL_PG_HI21, 0x90000003, 0x200005000, 0x1fff03010,
       0xd0fff7e3},
      // The largest page offset that fits: 2^32 - 4096 bytes.
      {"adrp x0, 0xfffff000", R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 0x0, 0xfffff000,
       0xf07fffe0},
      // _NC does not check: 2^32 bytes wrap to the 21-bit field's sign bit.
      {"adrp x0, -0x100000000", R_AARCH64_ADR_PREL_PG_HI21_NC, 0x90000000, 0x0, 0x100000000,
       0x90800000},
      {"adrp x0, 0x344000 (GOT page)", R_AARCH64_ADR_GOT_PAGE, 0x90000000, 0x100001234,
       0x100345678, 0x90001a20},
      {"add x0, x1, #0x678", R_AARCH64_ADD_ABS_LO12_NC, 0x91000020, 0x4000, 0x100345678,
       0x9119e020},
      {"ldrb w0, [x1, #0x678]", R_AARCH64_LDST8_ABS_LO12_NC, 0x39400020, 0x4000, 0x100345678,
       0x3959e020},
      {"ldrh w0, [x1, #0x678]", R_AARCH64_LDST16_ABS_LO12_NC, 0x79400020, 0x4000, 0x100345678,
       0x794cf020},
      {"ldr s0, [x1, #0x678]", R_AARCH64_LDST32_ABS_LO12_NC, 0xbd400020, 0x4000, 0x100345678,
       0xbd467820},
      {"str w2, [x3, #0x678]", R_AARCH64_LDST32_ABS_LO12_NC, 0xb9000062, 0x4000, 0x100345678,
       0xb9067862},
      {"ldr x0, [x1, #0x678]", R_AARCH64_LDST64_ABS_LO12_NC, 0xf9400020, 0x4000, 0x100345678,
       0xf9433c20},
      {"ldr q0, [x1, #0x670]", R_AARCH64_LDST128_ABS_LO12_NC, 0x3dc00020, 0x4000, 0x100345670,
       0x3dc19c20},
      {"ldr x0, [x0, #0x10] (GOT slot)", R_AARCH64_LD64_GOT_LO12_NC, 0xf9400000, 0x4000, 0x20010,
       0xf9400800},
      // The farthest calls: 2^27 - 4 bytes ahead, 2^27 behind.
      {"bl 0x7fffffc", R_AARCH64_CALL26, 0x94000000, 0x10000, 0x10000 + 0x7fffffc, 0x95ffffff},
      {"bl -0x8000000", R_AARCH64_CALL26, 0x94000000, 0x8010000, 0x10000, 0x96000000},
      {"b -0x800", R_AARCH64_JUMP26, 0x14000000, 0x1000, 0x800, 0x17fffe00},
      {"b.eq 0x100", R_AARCH64_CONDBR19, 0x54000000, 0x1000, 0x1100, 0x54000800},
      {"cbz x0, -4", R_AARCH64_CONDBR19, 0xb4000000, 0x1000, 0xffc, 0xb4ffffe0},
      {"tbz w0, #3, 0x20", R_AARCH64_TSTBR14, 0x36180000, 0x1000, 0x1020, 0x36180100},
      {"ldr x0, 8 (literal)", R_AARCH64_LD_PREL_LO19, 0x58000000, 0x1000, 0x1008, 0x58000040},
      {"adr x0, 0x12345", R_AARCH64_ADR_PREL_LO21, 0x10000000, 0x1000, 0x13345, 0x30091a20},
  };
  for (const Encoding &c : cases) {
    SCOPED_TRACE(c.what);
    Patched p = applied(c.type, c.before, c.place, c.value);
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.word, c.after) << std::hex << p.word << " != " << c.after;
  }
}

TEST(ObjectLoaderAArch64, ImmediatesAreReplacedAndTheRestKept) {
  // Before: the immediate field already holds bits (a reused instruction).
  // Expected: the field is replaced, registers and opcode stay.
  EXPECT_EQ(applied(R_AARCH64_ADD_ABS_LO12_NC, 0x913ffc20, 0, 0x678).word, 0x9119e020u);
  EXPECT_EQ(applied(R_AARCH64_CALL26, 0x97ffffff, 0x1000, 0x1008).word, 0x94000002u);
  EXPECT_EQ(applied(R_AARCH64_ADR_PREL_PG_HI21, 0xf0ffffe5, 0x1000, 0x1000).word, 0x90000005u);
}

TEST(ObjectLoaderAArch64, DataRelocations) {
  auto data = [](uint32_t type, size_t width, uint64_t place, uint64_t value) {
    unsigned char field[8] = {};
    applyRelocation(EM_AARCH64, type, field, place, value);
    uint64_t out = 0;
    std::memcpy(&out, field, width);
    return out;
  };
  EXPECT_EQ(data(R_AARCH64_ABS64, 8, 0x1000, 0x1122334455667788), 0x1122334455667788u);
  EXPECT_EQ(data(R_AARCH64_PREL64, 8, 0x10000, 0x8), uint64_t(-0xfff8));
  EXPECT_EQ(data(R_AARCH64_PREL32, 4, 0x10000, 0x8), 0xffff0008u);
  // PREL32 and ABS32 take signed or unsigned 32-bit values.
  EXPECT_EQ(data(R_AARCH64_PREL32, 4, 0x10000, 0x10000 + 0xffffffffull), 0xffffffffu);
  EXPECT_EQ(data(R_AARCH64_ABS32, 4, 0, 0xfffffffful), 0xffffffffu);
  EXPECT_EQ(data(R_AARCH64_ABS32, 4, 0, uint64_t(-0x80000000ll)), 0x80000000u);
  // NONE writes nothing.
  unsigned char untouched[4] = {1, 2, 3, 4};
  applyRelocation(EM_AARCH64, R_AARCH64_NONE, untouched, 0, 0x1234);
  EXPECT_EQ(untouched[0] + untouched[1] + untouched[2] + untouched[3], 10);
}

TEST(ObjectLoaderAArch64, OutOfRangeMisalignedAndWrongInstructionsAreRefused) {
  // Before: values one step past each field's range, low bits a scaled
  // offset cannot hold, and relocations on instructions they do not patch.
  // Expected: an Error naming the relocation and the reason; no guess.
  struct Refusal {
    uint32_t type, word;
    uint64_t place, value;
    const char *name, *reason;
  };
  const Refusal refusals[] = {
      {R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 0x0, 0x100000000, "R_AARCH64_ADR_PREL_PG_HI21",
       "out of ADRP's range (+-4 GiB)"},
      {R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 0x100001000, 0x0, "R_AARCH64_ADR_PREL_PG_HI21",
       "out of ADRP's range"},
      {R_AARCH64_ADR_GOT_PAGE, 0x90000000, 0x200005000, 0x100003008, "R_AARCH64_ADR_GOT_PAGE",
       "out of ADRP's range"},
      {R_AARCH64_CALL26, 0x94000000, 0x10000, 0x10000 + 0x8000000, "R_AARCH64_CALL26",
       "out of range (+-134217728 bytes)"},
      {R_AARCH64_CALL26, 0x94000000, 0x8010004, 0x10000, "R_AARCH64_CALL26", "out of range"},
      {R_AARCH64_JUMP26, 0x14000000, 0x10000, 0x10000 + 0x8000000, "R_AARCH64_JUMP26",
       "out of range"},
      {R_AARCH64_CALL26, 0x94000000, 0x10000, 0x10002, "R_AARCH64_CALL26",
       "not a multiple of 4"},
      {R_AARCH64_CONDBR19, 0x54000000, 0x1000, 0x1000 + 0x100000, "R_AARCH64_CONDBR19",
       "out of range (+-1048576 bytes)"},
      {R_AARCH64_TSTBR14, 0x36180000, 0x1000, 0x1000 + 0x8000, "R_AARCH64_TSTBR14",
       "out of range (+-32768 bytes)"},
      {R_AARCH64_LD_PREL_LO19, 0x58000000, 0x1000 + 0x100004, 0x1000, "R_AARCH64_LD_PREL_LO19",
       "out of range"},
      {R_AARCH64_ADR_PREL_LO21, 0x10000000, 0x1000, 0x1000 + 0x100000,
       "R_AARCH64_ADR_PREL_LO21", "out of ADR's range"},
      {R_AARCH64_LDST16_ABS_LO12_NC, 0x79400020, 0, 0x1001, "R_AARCH64_LDST16_ABS_LO12_NC",
       "not aligned to 2 bytes"},
      {R_AARCH64_LDST32_ABS_LO12_NC, 0xbd400020, 0, 0x1006, "R_AARCH64_LDST32_ABS_LO12_NC",
       "not aligned to 4 bytes"},
      {R_AARCH64_LDST64_ABS_LO12_NC, 0xf9400020, 0, 0x100345674,
       "R_AARCH64_LDST64_ABS_LO12_NC", "not aligned to 8 bytes"},
      {R_AARCH64_LDST128_ABS_LO12_NC, 0x3dc00020, 0, 0x100345678,
       "R_AARCH64_LDST128_ABS_LO12_NC", "not aligned to 16 bytes"},
      {R_AARCH64_LD64_GOT_LO12_NC, 0xf9400000, 0, 0x20014, "R_AARCH64_LD64_GOT_LO12_NC",
       "not aligned to 8 bytes"},
      {R_AARCH64_PREL32, 0, 0x10000, 0x10000 + 0x100000000, "R_AARCH64_PREL32",
       "out of its 32-bit range"},
      {R_AARCH64_PREL32, 0, 0x80010000, 0x8000, "R_AARCH64_PREL32", "out of its 32-bit range"},
      // An instruction the relocation does not patch: a call on an ADD,
      // a page on an ADR, a 64-bit slot load on a 32-bit load, an ADD
      // shifted by 12.
      {R_AARCH64_CALL26, 0x91000020, 0, 0, "R_AARCH64_CALL26", "is not a B or BL"},
      {R_AARCH64_ADR_PREL_PG_HI21, 0x10000000, 0, 0, "R_AARCH64_ADR_PREL_PG_HI21",
       "is not an ADRP"},
      {R_AARCH64_LD64_GOT_LO12_NC, 0xb9400000, 0, 0x20010, "R_AARCH64_LD64_GOT_LO12_NC",
       "accesses 4 bytes, not 8"},
      {R_AARCH64_LDST8_ABS_LO12_NC, 0x91000020, 0, 0x10, "R_AARCH64_LDST8_ABS_LO12_NC",
       "is not a load or store with an unsigned immediate"},
      {R_AARCH64_ADD_ABS_LO12_NC, 0x91400020, 0, 0x10, "R_AARCH64_ADD_ABS_LO12_NC",
       "is not an unshifted ADD immediate"},
      {R_AARCH64_CONDBR19, 0x14000000, 0, 0, "R_AARCH64_CONDBR19", "is not a B.cond, CBZ or CBNZ"},
      {R_AARCH64_TSTBR14, 0x54000000, 0, 0, "R_AARCH64_TSTBR14", "is not a TBZ or TBNZ"},
  };
  for (const Refusal &r : refusals) {
    SCOPED_TRACE(r.name + std::string(" ") + r.reason);
    Patched p = applied(r.type, r.word, r.place, r.value);
    EXPECT_TRUE(test::has(p.error, r.name)) << p.error;
    EXPECT_TRUE(test::has(p.error, r.reason)) << p.error;
  }
  // A kind the loader does not know (MOVW_UABS_G0: large code model).
  EXPECT_TRUE(test::has(applied(R_AARCH64_MOVW_UABS_G0, 0xd2800000, 0, 0).error,
                        "AArch64 relocation type 263 is not supported"));
}

TEST(ObjectLoaderAArch64, ImportStubJumpsThroughX16) {
  // Expected: ldr x16, #8; br x16; then the target's address.
  auto stub = importStub(EM_AARCH64, 0x1122334455667788);
  uint32_t ldr, br;
  uint64_t target;
  std::memcpy(&ldr, stub.data(), 4);
  std::memcpy(&br, stub.data() + 4, 4);
  std::memcpy(&target, stub.data() + 8, 8);
  EXPECT_EQ(ldr, 0x58000050u);
  EXPECT_EQ(br, 0xd61f0200u);
  EXPECT_EQ(target, 0x1122334455667788u);
}

TEST(ObjectLoaderAArch64, X86ArithmeticIsUnchanged) {
  unsigned char field[8] = {};
  applyRelocation(EM_X86_64, R_X86_64_PC32, field, 0x1000, 0x800);
  uint32_t pc32;
  std::memcpy(&pc32, field, 4);
  EXPECT_EQ(pc32, uint32_t(-0x800));
  EXPECT_THROW(applyRelocation(EM_X86_64, R_X86_64_PLT32, field, 0, 0x80000000), Error);
  EXPECT_THROW(applyRelocation(EM_X86_64, R_X86_64_32, field, 0, 0x100000000), Error);
  applyRelocation(EM_X86_64, R_X86_64_32S, field, 0, uint64_t(-4));
  std::memcpy(&pc32, field, 4);
  EXPECT_EQ(pc32, 0xfffffffcu);
  // The AArch64 numbers mean nothing on x86-64 and the other way round.
  EXPECT_EQ(relocationKind(EM_X86_64, R_AARCH64_CALL26), nullptr);
  EXPECT_EQ(relocationKind(EM_AARCH64, R_X86_64_PLT32), nullptr);
}

// ---- lanejit's aarch64 kernels ---------------------------------------------

// The ELF pieces of an object the tests read (the loader keeps its own).
struct Elf {
  explicit Elf(const std::string &bytes) : bytes(bytes) {
    std::memcpy(&header, bytes.data(), sizeof header);
    sections.resize(header.e_shnum);
    std::memcpy(sections.data(), bytes.data() + header.e_shoff,
                sections.size() * sizeof(Elf64_Shdr));
    for (const Elf64_Shdr &s : sections) {
      if (s.sh_type != SHT_SYMTAB)
        continue;
      symbols.resize(s.sh_size / sizeof(Elf64_Sym));
      std::memcpy(symbols.data(), bytes.data() + s.sh_offset, s.sh_size);
      strings = bytes.data() + sections[s.sh_link].sh_offset;
    }
  }
  std::string name(const Elf64_Sym &s) const { return strings + s.st_name; }
  std::string sectionName(size_t index) const {
    const Elf64_Shdr &names = sections[header.e_shstrndx];
    return bytes.data() + names.sh_offset + sections[index].sh_name;
  }
  // Relocations with the index of the section they patch: of the sections
  // the loader maps, or of every section (.stack_sizes too).
  std::vector<std::pair<size_t, Elf64_Rela>> relocations(bool loadedOnly = true) const {
    std::vector<std::pair<size_t, Elf64_Rela>> out;
    for (const Elf64_Shdr &s : sections) {
      if (s.sh_type != SHT_RELA || (loadedOnly && !(sections[s.sh_info].sh_flags & SHF_ALLOC)))
        continue;
      for (uint64_t at = 0; at < s.sh_size; at += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        std::memcpy(&r, bytes.data() + s.sh_offset + at, sizeof r);
        out.emplace_back(s.sh_info, r);
      }
    }
    return out;
  }
  const std::string &bytes;
  Elf64_Ehdr header;
  std::vector<Elf64_Shdr> sections;
  std::vector<Elf64_Sym> symbols;
  const char *strings = nullptr;
};

CompileOptions aarch64Options(int lanes) {
  CompileOptions o;
  o.target_triple = "aarch64-linux-gnu";
  o.target_cpu = "apple-m1";
  o.lanes = lanes;
  return o;
}

int64_t signExtend(uint64_t value, int bits) {
  return static_cast<int64_t>(value << (64 - bits)) >> (64 - bits);
}

// Decodes every patched instruction of the loaded entry's section back to
// the address it reaches and checks what is there: the bytes of S + A in
// the object (pages and low 12 bits together), the entry's own code for
// branches within it, a stub to the import for calls, the import's address
// in a GOT slot. Returns how many relocations it checked.
int checkLoaded(const std::string &object, const std::string &entry, const LinkedCode &code) {
  Elf elf(object);
  const Elf64_Sym *entrySymbol = nullptr;
  for (const Elf64_Sym &s : elf.symbols)
    if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_shndx != SHN_UNDEF && elf.name(s) == entry)
      entrySymbol = &s;
  if (!entrySymbol) {
    ADD_FAILURE() << "no entry " << entry;
    return 0;
  }
  const size_t text = entrySymbol->st_shndx;
  const uint64_t textBase = code.entry - entrySymbol->st_value;
  auto importAddress = [](const std::string &name) -> uint64_t {
    for (const RuntimeSymbol &r : runtimeSymbols())
      if (name == r.name)
        return reinterpret_cast<uint64_t>(r.address);
    return 0;
  };
  auto word = [](uint64_t address) {
    uint32_t w;
    std::memcpy(&w, reinterpret_cast<const void *>(address), 4);
    return w;
  };
  // Pages ADRP reached, by (symbol, addend), for the low-12 relocations.
  std::map<std::pair<uint32_t, int64_t>, uint64_t> pages;
  std::vector<std::pair<uint64_t, Elf64_Rela>> low12;
  int checked = 0;
  for (const auto &[section, r] : elf.relocations()) {
    if (section != text)
      continue;
    uint32_t type = ELF64_R_TYPE(r.r_info);
    uint32_t symbol = ELF64_R_SYM(r.r_info);
    const Elf64_Sym &s = elf.symbols[symbol];
    uint64_t place = textBase + r.r_offset;
    uint32_t w = word(place);
    std::string name = elf.name(s);
    SCOPED_TRACE(relocationKind(EM_AARCH64, type)->name + std::string(" against '") + name +
                 "' at " + std::to_string(r.r_offset));
    switch (type) {
    case R_AARCH64_ADR_PREL_PG_HI21:
    case R_AARCH64_ADR_PREL_PG_HI21_NC:
    case R_AARCH64_ADR_GOT_PAGE: {
      int64_t imm = signExtend(((w >> 29) & 3) | (((w >> 5) & 0x7ffff) << 2), 21);
      pages[{symbol, r.r_addend}] = (place & ~uint64_t{0xfff}) + (imm << 12);
      break;
    }
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26: {
      uint64_t target = place + (signExtend(w & 0x3ffffff, 26) << 2);
      if (s.st_shndx == SHN_UNDEF) {
        // The import's stub.
        uint64_t quad;
        std::memcpy(&quad, reinterpret_cast<const void *>(target + 8), 8);
        EXPECT_EQ(word(target), 0x58000050u);
        EXPECT_EQ(word(target + 4), 0xd61f0200u);
        EXPECT_EQ(quad, importAddress(name));
      } else if (s.st_shndx == text) {
        EXPECT_EQ(target, textBase + s.st_value + r.r_addend);
      }
      ++checked;
      break;
    }
    case R_AARCH64_CONDBR19:
    case R_AARCH64_TSTBR14: {
      int bits = type == R_AARCH64_CONDBR19 ? 19 : 14;
      uint64_t target = place + (signExtend((w >> 5) & ((1u << bits) - 1), bits) << 2);
      if (s.st_shndx == text) {
        EXPECT_EQ(target, textBase + s.st_value + r.r_addend);
      }
      ++checked;
      break;
    }
    default: low12.emplace_back(place, r);
    }
  }
  for (const auto &[place, r] : low12) {
    uint32_t type = ELF64_R_TYPE(r.r_info);
    uint32_t symbol = ELF64_R_SYM(r.r_info);
    const Elf64_Sym &s = elf.symbols[symbol];
    SCOPED_TRACE(relocationKind(EM_AARCH64, type)->name + std::string(" against '") +
                 elf.name(s) + "' at " + std::to_string(r.r_offset));
    uint32_t w = word(place);
    uint64_t low = (w >> 10) & 0xfff;
    switch (type) {
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC: break;
    case R_AARCH64_LDST16_ABS_LO12_NC: low <<= 1; break;
    case R_AARCH64_LDST32_ABS_LO12_NC: low <<= 2; break;
    case R_AARCH64_LDST64_ABS_LO12_NC:
    case R_AARCH64_LD64_GOT_LO12_NC: low <<= 3; break;
    case R_AARCH64_LDST128_ABS_LO12_NC: low <<= 4; break;
    default: ADD_FAILURE() << "a relocation this test does not decode"; continue;
    }
    auto page = pages.find({symbol, r.r_addend});
    if (page == pages.end()) {
      ADD_FAILURE() << "no ADRP for this symbol and addend";
      continue;
    }
    uint64_t address = page->second + low;
    if (type == R_AARCH64_LD64_GOT_LO12_NC) {
      uint64_t slot;
      std::memcpy(&slot, reinterpret_cast<const void *>(address), 8);
      EXPECT_EQ(slot, importAddress(elf.name(s)));
    } else if (s.st_shndx < elf.sections.size() &&
               elf.sections[s.st_shndx].sh_type == SHT_PROGBITS) {
      // The loaded bytes at S + A are the object's.
      const Elf64_Shdr &target = elf.sections[s.st_shndx];
      uint64_t offset = s.st_value + r.r_addend;
      uint64_t n = std::min<uint64_t>(16, target.sh_size - offset);
      EXPECT_EQ(std::memcmp(reinterpret_cast<const void *>(address),
                            object.data() + target.sh_offset + offset, n),
                0);
    }
    ++checked;
  }
  return checked;
}

TEST(ObjectLoaderAArch64, LibraryKernelsUseOnlyRelocationsItApplies) {
  // Before: every library kernel, quantizing ones included, compiled for
  // aarch64 (apple-m1) at W = 4, 8, 16, and at W = 8 with switches that
  // change the code's shape (no fusion, no full-packet bodies, packet
  // bodies as calls, fills by memset, tail branches), each object loaded by
  // loadObjectFor(EM_AARCH64) into this process (relocated, not run).
  // Expected: each is AArch64, every relocation kind in it (its unloaded
  // .stack_sizes too) is one the loader knows, it loads, and every patched instruction
  // reaches what its relocation names.
  std::vector<library::Entry> entries = library::all();
  for (const library::Entry &e : library::quantizing())
    entries.push_back(e);
  struct Variant {
    int lanes;
    std::vector<std::pair<std::string, bool>> switches;
  };
  const std::vector<Variant> variants = {
      {4, {}},
      {8, {}},
      {16, {}},
      {8, {{"FUSE_POINTWISE", false}, {"FUSE_REDUCTIONS", false}}},
      {8, {{"SPECIALIZE_FULL_PACKETS", false}, {"FILL_STORES", false}}},
      {8, {{"INLINE_PACKET_BODIES", false}, {"LEFTOVER_LOOP", false}}},
      {16, {{"BRANCHLESS_TAIL", true}, {"FUSE_OUTPUTS", false}}},
  };
  std::map<std::string, int> seen; // kind -> relocations
  for (const Variant &v : variants) {
    CompileOptions o = aarch64Options(v.lanes);
    std::string label = "W=" + std::to_string(v.lanes);
    for (const auto &[name, on] : v.switches) {
      o.setSwitch(name, on);
      label += std::string(on ? " +" : " -") + name;
    }
    for (const library::Entry &e : entries) {
      SCOPED_TRACE(e.name + " " + label);
      Kernel k = compile(e.make(), o);
      const std::string &object = k.object();
      Elf elf(object);
      ASSERT_EQ(elf.header.e_machine, EM_AARCH64);
      bool known = true;
      for (const auto &[section, r] : elf.relocations(false)) {
        const RelocationKind *kind = relocationKind(EM_AARCH64, ELF64_R_TYPE(r.r_info));
        EXPECT_NE(kind, nullptr) << "relocation type " << ELF64_R_TYPE(r.r_info);
        known = known && kind;
        if (!kind)
          continue;
        std::string where = std::string(kind->name) + " in " + elf.sectionName(section);
        if (ELF64_R_TYPE(r.r_info) == R_AARCH64_CALL26)
          where += " to " + elf.name(elf.symbols[ELF64_R_SYM(r.r_info)]);
        ++seen[where];
      }
      if (!known)
        continue;
      try {
        LinkedCode code = loadObjectFor(EM_AARCH64, object, k.entrySymbol());
        checkLoaded(object, k.entrySymbol(), code);
      } catch (const Error &error) {
        ADD_FAILURE() << error.what();
      }
    }
  }
  std::string kinds;
  for (const auto &[name, count] : seen)
    kinds += "\n  " + name + ": " + std::to_string(count);
  std::printf("relocations in aarch64 library kernels:%s\n", kinds.c_str());
  EXPECT_FALSE(seen.empty());
}

TEST(ObjectLoaderAArch64, ObjectsOfTheOtherMachineAreRefused) {
  // Before: an aarch64 kernel's object and the host's (x86-64) object of
  // the same kernel. Expected: each loads only as its own machine's.
  Kernel arm = compile(library::rmsNorm(), aarch64Options(8));
  Kernel x86 = compile(library::rmsNorm(), test::targetOptions());
  auto error = [](uint16_t machine, const std::string &object, const std::string &entry) {
    try {
      loadObjectFor(machine, object, entry);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error(EM_AARCH64, arm.object(), arm.entrySymbol()), "");
  EXPECT_TRUE(test::has(error(EM_AARCH64, x86.object(), x86.entrySymbol()),
                        "not a relocatable AArch64 object"));
  EXPECT_TRUE(test::has(error(EM_X86_64, arm.object(), arm.entrySymbol()),
                        "not a relocatable x86-64 object"));
  EXPECT_TRUE(test::has(error(EM_386, arm.object(), arm.entrySymbol()),
                        "objects of ELF machine 3 are not supported"));
  // loadObject takes the host's machine only.
  const Kernel &foreign = hostElfMachine() == EM_AARCH64 ? x86 : arm;
  try {
    loadObject(foreign.object(), foreign.entrySymbol());
    ADD_FAILURE() << "loaded another machine's object";
  } catch (const Error &e) {
    EXPECT_TRUE(test::has(e.what(), "not a relocatable")) << e.what();
  }
}

// `object` with its first relocation of `type` changed by `change`.
std::string withRelocation(const std::string &object, uint32_t type,
                           void (*change)(Elf64_Rela &)) {
  std::string out = object;
  Elf elf(object);
  for (const Elf64_Shdr &s : elf.sections) {
    if (s.sh_type != SHT_RELA)
      continue;
    for (uint64_t at = 0; at < s.sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, out.data() + s.sh_offset + at, sizeof r);
      if (ELF64_R_TYPE(r.r_info) != type)
        continue;
      change(r);
      std::memcpy(out.data() + s.sh_offset + at, &r, sizeof r);
      return out;
    }
  }
  ADD_FAILURE() << "no relocation of type " << type;
  return out;
}

TEST(ObjectLoaderAArch64, TheLoaderRefusesByTheRelocationsName) {
  // Before: a kernel's object with a 16-byte constant load's addend moved
  // by 8 bytes, and with a relocation type the loader does not know.
  // Expected: loadObjectFor refuses, naming the kernel, the relocation and
  // why.
  Kernel k = compile(library::rmsNorm(), aarch64Options(8));
  auto error = [&](const std::string &object) {
    try {
      loadObjectFor(EM_AARCH64, object, k.entrySymbol());
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string misaligned = error(withRelocation(
      k.object(), R_AARCH64_LDST128_ABS_LO12_NC, [](Elf64_Rela &r) { r.r_addend += 8; }));
  EXPECT_TRUE(test::has(misaligned, "loading kernel '" + k.entrySymbol() + "'")) << misaligned;
  EXPECT_TRUE(test::has(misaligned, "R_AARCH64_LDST128_ABS_LO12_NC")) << misaligned;
  EXPECT_TRUE(test::has(misaligned, "not aligned to 16 bytes")) << misaligned;
  std::string unknown =
      error(withRelocation(k.object(), R_AARCH64_ADR_PREL_PG_HI21, [](Elf64_Rela &r) {
        r.r_info = ELF64_R_INFO(ELF64_R_SYM(r.r_info), R_AARCH64_MOVW_UABS_G0);
      }));
  EXPECT_TRUE(test::has(unknown, "AArch64 relocation type 263 is not supported")) << unknown;
}

TEST(ObjectLoaderAArch64, DamagedObjectsAreRefusedOrLoadedNeverACrash) {
  // Before: an aarch64 kernel's object with one to four bytes changed at
  // random (instruction words included, so the relocations' instruction
  // checks see other classes). Expected: each is loaded or refused with an
  // Error; nothing crashes or throws anything else. Nothing is run.
  Kernel k = compile(library::maskedSoftmax(), aarch64Options(8));
  const std::string &object = k.object();
  std::mt19937_64 random(31);
  int refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string damaged = object;
    for (int n = 1 + static_cast<int>(random() % 4); n > 0; --n)
      damaged[random() % damaged.size()] = static_cast<char>(random());
    try {
      loadObjectFor(EM_AARCH64, damaged, k.entrySymbol());
    } catch (const Error &) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

// ---- An object from the aarch64 C compiler ---------------------------------

// Debian's cross compiler, when installed: objects that call and take the
// address of the runtime's routines (CALL26 to a stub, a GOT slot), keep
// writable data and read constants.
std::string crossObject(const test::ScratchDir &dir, const std::string &source) {
  std::ofstream(dir.file("k.c")) << source;
  std::string cmd = "aarch64-linux-gnu-gcc -O2 -fPIC -c '" + dir.file("k.c") + "' -o '" +
                    dir.file("k.o") + "' 2>/dev/null";
  if (test::shell(cmd) != 0)
    return "";
  return test::slurp(dir.file("k.o"));
}

TEST(ObjectLoaderAArch64, CrossCompiledObjectWithImportsAndData) {
  test::ScratchDir dir("lanejit_object_loader_aarch64");
  if (test::shell("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "aarch64-linux-gnu-gcc is not installed (scripts/install-deps)";
  std::string object = crossObject(dir, R"(
#include <string.h>
static long calls;
static const float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
void *(*volatile copier)(void *, const void *, size_t);
long fill_then_copy(char *a, char *b, long n) {
  copier = memcpy;
  memset(a, 7, n);
  copier(b, a, n);
  return ++calls + (long)table[n & 3];
}
)");
  ASSERT_FALSE(object.empty());
  // A global defined here is reached through the GOT under -fPIC: kernels
  // never do that, and the loader refuses it by name.
  try {
    loadObjectFor(EM_AARCH64, object, "fill_then_copy");
    ADD_FAILURE() << "a GOT load of a defined symbol was accepted";
  } catch (const Error &e) {
    EXPECT_TRUE(test::has(e.what(), "of a symbol the kernel defines")) << e.what();
  }
  // Without it: loads (its .eh_frame with a PREL32 too), its call reaches
  // a stub and its GOT loads a slot.
  std::string fixed = crossObject(dir, R"(
#include <string.h>
static long calls;
static const float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
long fill_then_copy(char *a, char *b, long n) {
  void *(*volatile mover)(void *, const void *, size_t) = memmove;
  memset(a, 7, n);
  memcpy(b, a, n);
  mover(b, a, 1);
  return ++calls + (long)table[n & 3];
}
)");
  LinkedCode code = loadObjectFor(EM_AARCH64, fixed, "fill_then_copy");
  std::set<uint32_t> types;
  for (const auto &[section, r] : Elf(fixed).relocations())
    types.insert(ELF64_R_TYPE(r.r_info));
  EXPECT_TRUE(types.count(R_AARCH64_CALL26) || types.count(R_AARCH64_JUMP26));
  EXPECT_TRUE(types.count(R_AARCH64_ADR_GOT_PAGE));
  EXPECT_TRUE(types.count(R_AARCH64_LD64_GOT_LO12_NC));
  EXPECT_TRUE(types.count(R_AARCH64_PREL32));
  EXPECT_GT(checkLoaded(fixed, "fill_then_copy", code), 4);
  // A GOT entry for S + A with A != 0 is none of the loader's slots.
  try {
    auto addend = [](Elf64_Rela &r) { r.r_addend = 8; };
    loadObjectFor(EM_AARCH64, withRelocation(fixed, R_AARCH64_ADR_GOT_PAGE, addend),
                  "fill_then_copy");
    ADD_FAILURE() << "a GOT entry with an addend was accepted";
  } catch (const Error &e) {
    EXPECT_TRUE(test::has(e.what(), "R_AARCH64_ADR_GOT_PAGE with an addend")) << e.what();
  }
}

} // namespace
} // namespace lanejit::jit
