#include "inspect/object_reader.h"

#include "inspect/disassembler.h"
#include "inspect/plt.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/MC/MCInst.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/LEB128.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <optional>
#include <memory>

namespace lanejit::inspect {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw Error(Error::Kind::Io, message);
}

template <typename T> T orFail(llvm::Expected<T> value, const std::string &what) {
  if (!value)
    fail(what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

// section index -> (offset in section -> symbol named by a relocation there)
using RelocationMap = std::map<uint64_t, std::map<uint64_t, std::string>>;

std::string symbolName(const llvm::object::SymbolRef &symbol) {
  llvm::Expected<llvm::StringRef> name = symbol.getName();
  if (!name) {
    llvm::consumeError(name.takeError());
    return "?";
  }
  if (!name->empty())
    return name->str();
  // Section symbols have no name of their own.
  if (auto section = symbol.getSection(); section && *section != symbol.getObject()->section_end())
    if (auto sectionName = (*section)->getName())
      return sectionName->str();
  return "?";
}

// The section a relocation section applies to, if `section` is one.
std::optional<llvm::object::section_iterator>
relocatedBy(const llvm::object::ObjectFile &object, const llvm::object::SectionRef &section) {
  auto relocated = section.getRelocatedSection();
  if (!relocated) {
    llvm::consumeError(relocated.takeError());
    return std::nullopt;
  }
  if (*relocated == object.section_end())
    return std::nullopt;
  return *relocated;
}

RelocationMap relocationsByTarget(const llvm::object::ObjectFile &object) {
  RelocationMap map;
  for (const llvm::object::SectionRef &section : object.sections()) {
    auto relocated = relocatedBy(object, section);
    if (!relocated)
      continue;
    for (const llvm::object::RelocationRef &rel : section.relocations()) {
      auto symbol = rel.getSymbol();
      std::string name = symbol == object.symbol_end() ? "?" : symbolName(*symbol);
      map[(*relocated)->getIndex()][rel.getOffset()] = name;
    }
  }
  return map;
}

// .stack_sizes: per function an address and a ULEB128 frame size. In a
// relocatable object the address is a relocation (to the function, or to
// its section plus an addend); in a linked one it is written out.
// Returns (section name or function name, value) -> size; linked: ("", address).
using StackSizes = std::map<std::pair<std::string, uint64_t>, uint64_t>;

void linkedStackSizes(const llvm::object::ObjectFile &object, StackSizes &sizes) {
  for (const llvm::object::SectionRef &section : object.sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".stack_sizes")
      continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    const uint8_t *at = contents->bytes_begin(), *end = contents->bytes_end();
    while (end - at > 8) {
      uint64_t address = llvm::support::endian::read64le(at);
      unsigned length = 0;
      const char *error = nullptr;
      uint64_t size = llvm::decodeULEB128(at + 8, &length, end, &error);
      if (error)
        break;
      sizes[{"", address}] = size;
      at += 8 + length;
    }
  }
}

StackSizes stackSizes(const llvm::object::ObjectFile &object, bool linked) {
  StackSizes sizes;
  if (linked) {
    linkedStackSizes(object, sizes);
    return sizes;
  }
  for (const llvm::object::SectionRef &section : object.sections()) {
    auto relocated = relocatedBy(object, section);
    if (!relocated)
      continue;
    auto name = (*relocated)->getName();
    if (!name || *name != ".stack_sizes") {
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    auto contents = (*relocated)->getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    for (const llvm::object::RelocationRef &rel : section.relocations()) {
      uint64_t at = rel.getOffset() + 8;
      if (at >= contents->size())
        continue;
      const char *error = nullptr;
      uint64_t size =
          llvm::decodeULEB128(contents->bytes_begin() + at, nullptr, contents->bytes_end(), &error);
      if (error)
        continue;
      llvm::object::ELFRelocationRef elfRel(rel);
      auto addend = elfRel.getAddend();
      int64_t offset = 0;
      if (addend)
        offset = *addend;
      else
        llvm::consumeError(addend.takeError());
      auto symbol = rel.getSymbol();
      if (symbol == object.symbol_end())
        continue;
      sizes[{symbolName(*symbol), static_cast<uint64_t>(offset)}] = size;
    }
  }
  return sizes;
}

DecodedInstruction decodeOne(const Disassembler &d, const llvm::MCInst &inst, uint64_t address,
                             uint64_t size, uint64_t functionStart) {
  DecodedInstruction out;
  out.offset = address - functionStart;
  out.size = size;
  const llvm::MCInstrDesc &desc = d.instrInfo->get(inst.getOpcode());
  out.may_load = desc.mayLoad();
  out.may_store = desc.mayStore();
  out.is_call = desc.isCall();
  out.is_branch = desc.isBranch();
  out.is_return = desc.isReturn();
  out.falls_through = !desc.isBarrier() && !desc.isReturn();
  uint64_t target = 0;
  if ((out.is_call || out.is_branch) && d.analysis->evaluateBranch(inst, address, size, target))
    out.branch_target = static_cast<int64_t>(target) - static_cast<int64_t>(functionStart);
  std::string text;
  llvm::raw_string_ostream os(text);
  d.printer->printInst(&inst, address, "", *d.subtarget, os);
  os.flush();
  size_t start = text.find_first_not_of(" \t");
  out.text = start == std::string::npos ? text : text.substr(start);
  for (char &c : out.text)
    if (c == '\t')
      c = ' ';
  return out;
}

// A defined function symbol and where its bytes are. `address` is the
// symbol's value: in a relocatable object every section starts at 0, so it
// is the offset in the section; in a linked one, the virtual address.
struct FunctionSymbol {
  std::string name;
  llvm::object::SectionRef section;
  uint64_t address = 0, size = 0;
};

// The function a call or branch target lies in ("" if none): by address in
// a linked object, within the same section in a relocatable one.
std::string functionAt(const std::vector<FunctionSymbol> &functions, bool linked,
                       const llvm::object::SectionRef &section, uint64_t address) {
  const FunctionSymbol *inside = nullptr;
  for (const FunctionSymbol &f : functions) {
    if (!linked && f.section != section)
      continue;
    if (address == f.address)
      return f.name;
    if (!inside && address > f.address && address - f.address < f.size)
      inside = &f;
  }
  return inside ? inside->name : "";
}

// Calls, and branches that leave the function or whose target is a
// relocation's (a tail call) or unknown (an indirect jump), are named.
bool needsTarget(const DecodedInstruction &inst, uint64_t functionBytes) {
  if (inst.is_call)
    return true;
  if (!inst.is_branch)
    return false;
  if (!inst.branch_target || !inst.relocation_symbol.empty())
    return true;
  return *inst.branch_target < 0 || static_cast<uint64_t>(*inst.branch_target) >= functionBytes;
}

// DecodedInstruction::target. A relocatable object's relocation names it;
// otherwise a direct target is a PLT entry's import (`plt`: linked objects
// only) or lies in a function, and a memory-indirect one in a linked object
// may read a GOT slot (`call qword ptr [rip + X]`, -fno-plt).
std::string targetName(const DecodedInstruction &inst, const llvm::MCInst &mc,
                       const FunctionSymbol &from, const std::vector<FunctionSymbol> &functions,
                       const LinkedCallTargets *plt, const Disassembler &d) {
  if (!inst.relocation_symbol.empty())
    return inst.relocation_symbol;
  uint64_t address = from.address + inst.offset;
  if (!inst.branch_target) {
    if (!plt)
      return "";
    auto slot = d.analysis->evaluateMemoryOperandAddress(mc, d.subtarget.get(), address, inst.size);
    return slot ? plt->gotSlot(*slot) : "";
  }
  uint64_t to = from.address + static_cast<uint64_t>(*inst.branch_target);
  std::string name = plt ? plt->pltEntry(to) : "";
  if (name.empty())
    name = functionAt(functions, plt != nullptr, from.section, to);
  return name.empty() ? fmt::format("{:#x}", to) : name;
}

std::string elfKind(uint16_t type) {
  switch (type) {
  case llvm::ELF::ET_REL: return "relocatable";
  case llvm::ELF::ET_DYN: return "shared object";
  case llvm::ELF::ET_EXEC: return "executable";
  }
  fail("inspect reads relocatable objects, shared objects and executables; this ELF file has "
       "type " +
       std::to_string(type));
}

} // namespace

DecodedObject readObject(std::string_view bytes) {
  if (bytes.empty())
    fail("empty object (nothing was compiled?)");
  llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), "kernel object");
  std::unique_ptr<llvm::object::ObjectFile> object =
      orFail(llvm::object::ObjectFile::createObjectFile(buffer), "not an object file LLVM reads");
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object.get());
  if (!elf)
    fail("inspect reads ELF objects; this one is " + object->getFileFormatName().str());
  DecodedObject out;
  out.format = object->getFileFormatName().str();
  out.kind = elfKind(elf->getEType());
  bool linked = elf->getEType() != llvm::ELF::ET_REL;
  llvm::Triple triple = object->makeTriple();
  out.triple = triple.str();
  if (triple.getArch() == llvm::Triple::aarch64)
    out.arch = Arch::AArch64;
  else if (triple.getArch() != llvm::Triple::x86_64)
    fail("inspect reads x86-64 and AArch64 (little-endian) objects; this one is " + out.triple);
  Disassembler d(triple);
  // Code in a relocatable object names its targets by relocations; in a
  // linked one they are resolved, and imports go through the PLT or GOT.
  RelocationMap relocations;
  std::optional<LinkedCallTargets> plt;
  if (linked)
    plt.emplace(*object, d);
  else
    relocations = relocationsByTarget(*object);
  StackSizes frames = stackSizes(*object, linked);

  // .symtab names local functions too (kernel._omp_fn.0, kernel.cold); a
  // stripped linked object keeps only .dynsym, its exported functions.
  std::vector<llvm::object::SymbolRef> symbols(object->symbol_begin(), object->symbol_end());
  if (linked && symbols.empty())
    for (const llvm::object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators())
      symbols.push_back(symbol);
  std::vector<FunctionSymbol> functions;
  for (const llvm::object::SymbolRef &symbol : symbols) {
    uint32_t flags = orFail(symbol.getFlags(), "reading a symbol's flags");
    std::string name = symbolName(symbol);
    if (flags & llvm::object::SymbolRef::SF_Undefined) {
      if (!linked && !name.empty() && name != "?")
        out.undefined.push_back(name);
      continue;
    }
    if (orFail(symbol.getType(), "reading a symbol's type") != llvm::object::SymbolRef::ST_Function)
      continue;
    auto section = orFail(symbol.getSection(), "finding " + name + "'s section");
    if (section == object->section_end())
      continue;
    uint64_t address = orFail(symbol.getAddress(), "reading " + name + "'s address");
    functions.push_back(
        FunctionSymbol{name, *section, address, llvm::object::ELFSymbolRef(symbol).getSize()});
  }
  // A linked object's imports are what its dynamic linker must resolve.
  if (linked)
    for (const llvm::object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators()) {
      auto flags = symbol.getFlags();
      if (!flags) {
        llvm::consumeError(flags.takeError());
        continue;
      }
      std::string name = symbolName(symbol);
      if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name.empty() && name != "?")
        out.undefined.push_back(name);
    }

  for (const FunctionSymbol &symbol : functions) {
    const std::string &name = symbol.name;
    llvm::StringRef contents =
        orFail(symbol.section.getContents(), "reading " + name + "'s section");
    uint64_t sectionAddress = symbol.section.getAddress();
    uint64_t offset = symbol.address - sectionAddress; // in the section
    if (symbol.address < sectionAddress || offset > contents.size() ||
        symbol.size > contents.size() - offset)
      fail("symbol " + name + " lies outside its section");
    DecodedFunction fn;
    fn.name = name;
    fn.address = symbol.address;
    fn.bytes = symbol.size;
    out.defined.push_back(name);
    std::string sectionName = orFail(symbol.section.getName(), "reading a section name").str();
    for (auto key : {std::pair{name, uint64_t{0}}, std::pair{sectionName, offset},
                     std::pair{std::string(), symbol.address}})
      if (auto it = frames.find(key); it != frames.end())
        fn.stack_size = it->second;
    const auto &sectionRelocations = relocations[symbol.section.getIndex()];
    llvm::ArrayRef<uint8_t> code(contents.bytes_begin() + offset, fn.bytes);
    fn.code.assign(contents.data() + offset, fn.bytes);
    for (uint64_t at = 0; at < fn.bytes;) {
      llvm::MCInst inst;
      uint64_t size = 0;
      uint64_t address = fn.address + at;
      if (d.decoder->getInstruction(inst, size, code.slice(at), address, llvm::nulls()) !=
          llvm::MCDisassembler::Success) {
        DecodedInstruction bad;
        bad.offset = at;
        bad.size = 1;
        // AArch64 instructions are 4 bytes, aligned: skip a whole word.
        bad.size = out.arch == Arch::AArch64 ? 4 : 1;
        bad.text = out.arch == Arch::AArch64 ? "<undecodable word>" : "<undecodable byte>";
        fn.instructions.push_back(bad);
        at += bad.size;
        continue;
      }
      DecodedInstruction decoded = decodeOne(d, inst, address, size, fn.address);
      auto rel = sectionRelocations.lower_bound(offset + at);
      if (rel != sectionRelocations.end() && rel->first < offset + at + size)
        decoded.relocation_symbol = rel->second;
      if (needsTarget(decoded, fn.bytes))
        decoded.target = targetName(decoded, inst, symbol, functions, plt ? &*plt : nullptr, d);
      fn.instructions.push_back(std::move(decoded));
      at += size;
    }
    out.functions.push_back(std::move(fn));
  }
  std::sort(
      out.functions.begin(), out.functions.end(),
      [](const DecodedFunction &a, const DecodedFunction &b) { return a.address < b.address; });
  std::sort(out.undefined.begin(), out.undefined.end());
  out.undefined.erase(std::unique(out.undefined.begin(), out.undefined.end()), out.undefined.end());
  return out;
}

} // namespace lanejit::inspect
