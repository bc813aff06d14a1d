#include "inspect/object_reader.h"

#include <lanejit/error.h>

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/LEB128.h>
#include <llvm/Support/TargetSelect.h>
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

// Everything the MC layer needs to decode and print one target's code.
struct Disassembler {
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> decoder;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;

  explicit Disassembler(const llvm::Triple &triple) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetDisassembler();
    std::string problem;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple.str(), problem);
    if (!target)
      fail("no disassembler for " + triple.str() + ": " + problem);
    llvm::MCTargetOptions options;
    registers.reset(target->createMCRegInfo(triple.str()));
    asmInfo.reset(target->createMCAsmInfo(*registers, triple.str(), options));
    // No CPU or features: the x86 decoder accepts every encoding (AVX-512
    // included) regardless, so any object decodes as written.
    subtarget.reset(target->createMCSubtargetInfo(triple.str(), "", ""));
    instrInfo.reset(target->createMCInstrInfo());
    if (!registers || !asmInfo || !subtarget || !instrInfo)
      fail("cannot set up a disassembler for " + triple.str());
    context =
        std::make_unique<llvm::MCContext>(triple, asmInfo.get(), registers.get(), subtarget.get());
    decoder.reset(target->createMCDisassembler(*subtarget, *context));
    // Variant 1 is Intel syntax on x86: memory operands carry their size.
    printer.reset(target->createMCInstPrinter(triple, 1, *asmInfo, *instrInfo, *registers));
    analysis.reset(target->createMCInstrAnalysis(instrInfo.get()));
    if (!decoder || !printer || !analysis)
      fail("LLVM has no disassembler/printer for " + triple.str());
  }
};

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

// .stack_sizes: per function an address (a relocation to the function or to
// its section plus an addend) and a ULEB128 frame size.
// Returns (section name or function name, value) -> size.
std::map<std::pair<std::string, uint64_t>, uint64_t>
stackSizes(const llvm::object::ObjectFile &object) {
  std::map<std::pair<std::string, uint64_t>, uint64_t> sizes;
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&object);
  if (!elf)
    return sizes;
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

} // namespace

DecodedObject readObject(std::string_view bytes) {
  if (bytes.empty())
    fail("empty object (nothing was compiled?)");
  llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), "kernel object");
  std::unique_ptr<llvm::object::ObjectFile> object =
      orFail(llvm::object::ObjectFile::createObjectFile(buffer), "not an object file LLVM reads");
  if (!object->isELF())
    fail("inspect reads ELF objects; this one is " + object->getFileFormatName().str());
  DecodedObject out;
  out.format = object->getFileFormatName().str();
  llvm::Triple triple = object->makeTriple();
  out.triple = triple.str();
  if (triple.getArch() != llvm::Triple::x86_64)
    fail("inspect reads x86-64 objects; this one is " + out.triple);
  Disassembler d(triple);
  RelocationMap relocations = relocationsByTarget(*object);
  auto frames = stackSizes(*object);

  for (const llvm::object::SymbolRef &symbol : object->symbols()) {
    uint32_t flags = orFail(symbol.getFlags(), "reading a symbol's flags");
    std::string name = symbolName(symbol);
    if (flags & llvm::object::SymbolRef::SF_Undefined) {
      if (!name.empty() && name != "?")
        out.undefined.push_back(name);
      continue;
    }
    if (orFail(symbol.getType(), "reading a symbol's type") != llvm::object::SymbolRef::ST_Function)
      continue;
    auto section = orFail(symbol.getSection(), "finding " + name + "'s section");
    if (section == object->section_end())
      continue;
    llvm::StringRef contents = orFail(section->getContents(), "reading " + name + "'s section");
    DecodedFunction fn;
    fn.name = name;
    fn.address =
        orFail(symbol.getAddress(), "reading " + name + "'s address") - section->getAddress();
    fn.bytes = llvm::object::ELFSymbolRef(symbol).getSize();
    if (fn.address > contents.size() || fn.bytes > contents.size() - fn.address)
      fail("symbol " + name + " lies outside its section");
    out.defined.push_back(name);
    std::string sectionName = orFail(section->getName(), "reading a section name").str();
    for (auto key : {std::pair{name, uint64_t{0}}, std::pair{sectionName, fn.address}})
      if (auto it = frames.find(key); it != frames.end())
        fn.stack_size = it->second;
    const auto &sectionRelocations = relocations[section->getIndex()];
    llvm::ArrayRef<uint8_t> code(contents.bytes_begin() + fn.address, fn.bytes);
    for (uint64_t at = 0; at < fn.bytes;) {
      llvm::MCInst inst;
      uint64_t size = 0;
      uint64_t address = fn.address + at;
      if (d.decoder->getInstruction(inst, size, code.slice(at), address, llvm::nulls()) !=
          llvm::MCDisassembler::Success) {
        DecodedInstruction bad;
        bad.offset = at;
        bad.size = 1;
        bad.text = "<undecodable byte>";
        fn.instructions.push_back(bad);
        at += 1;
        continue;
      }
      DecodedInstruction decoded = decodeOne(d, inst, address, size, fn.address);
      auto rel = sectionRelocations.lower_bound(address);
      if (rel != sectionRelocations.end() && rel->first < address + size)
        decoded.relocation_symbol = rel->second;
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
