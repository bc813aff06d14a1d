#include "jit/object_loader.h"

#include "jit/elf_relocations.h"

#include <lanejit/error.h>

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

namespace lanejit::jit {
namespace {

class Loader {
public:
  Loader(uint16_t machine, std::string_view bytes, const std::string &entry)
      : machine_(machine), bytes_(bytes), entry_(entry) {}

  LinkedCode load() {
    readHeaders();
    layOut();
    map();
    copySections();
    relocate();
    writeImports();
    flushInstructionCache();
    protect();
    return {findEntry(), mapping_};
  }

private:
  enum Region { Code, ReadOnly, Writable, kRegions };

  // The mapping, unmapped with the last holder of the kernel's code.
  struct Mapping {
    void *base = nullptr;
    size_t size = 0;
    ~Mapping() {
      if (base)
        ::munmap(base, size);
    }
  };

  struct Placed {
    bool loaded = false;
    Region region = Code;
    uint64_t offset = 0; // within its region
  };

  // An import's stub (a jump the code's calls reach: within +-2 GiB on
  // x86-64, +-128 MiB on AArch64) and GOT slot (its address, for
  // GOT-relative loads).
  struct Import {
    uint64_t address = 0;
    uint64_t stub = 0, got = 0; // offsets in Code and ReadOnly
  };

  static constexpr uint64_t kStubBytes = kImportStubBytes;

  [[noreturn]] void refuse(const std::string &why) const {
    throw Error(Error::Kind::Compile, "loading kernel '" + entry_ + "': " + why);
  }

  template <typename T> T read(uint64_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T))
      refuse("the object is truncated");
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  // A section's bytes must lie inside the object.
  void checkInside(const Elf64_Shdr &s) const {
    if (s.sh_type != SHT_NOBITS &&
        (s.sh_offset > bytes_.size() || bytes_.size() - s.sh_offset < s.sh_size))
      refuse("a section lies outside the object");
  }

  void readHeaders() {
    auto header = read<Elf64_Ehdr>(0);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
      refuse("not a 64-bit little-endian ELF object");
    if (header.e_type != ET_REL || header.e_machine != machine_)
      refuse(std::string("not a relocatable ") + machineName(machine_) + " object");
    if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0)
      refuse("unexpected section header table");
    for (uint16_t i = 0; i < header.e_shnum; ++i)
      sections_.push_back(read<Elf64_Shdr>(header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr)));
    for (size_t i = 0; i < sections_.size(); ++i) {
      if (sections_[i].sh_type != SHT_SYMTAB)
        continue;
      if (symtab_ != 0)
        refuse("more than one symbol table");
      symtab_ = i;
    }
    if (symtab_ == 0)
      refuse("no symbol table");
    const Elf64_Shdr &symtab = sections_[symtab_];
    checkInside(symtab);
    // Its string table must hold bytes (checkInside lets a SHT_NOBITS
    // section through: it has none in the file).
    if (symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_link >= sections_.size() ||
        sections_[symtab.sh_link].sh_type != SHT_STRTAB)
      refuse("unexpected symbol table");
    checkInside(sections_[symtab.sh_link]);
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym))
      symbols_.push_back(read<Elf64_Sym>(symtab.sh_offset + at));
  }

  std::string_view symbolName(const Elf64_Sym &symbol) const {
    const Elf64_Shdr &strings = sections_[sections_[symtab_].sh_link];
    if (symbol.st_name >= strings.sh_size)
      refuse("a symbol name lies outside its string table");
    const char *begin = bytes_.data() + strings.sh_offset + symbol.st_name;
    size_t most = strings.sh_size - symbol.st_name;
    return {begin, ::strnlen(begin, most)};
  }

  static uint64_t alignUp(uint64_t value, uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
  }

  // Where each allocated section goes; a stub and a GOT slot per import.
  void layOut() {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    placed_.resize(sections_.size());
    for (size_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr &s = sections_[i];
      // Notes (a compiler's build properties) are not needed to run.
      if (!(s.sh_flags & SHF_ALLOC) || s.sh_type == SHT_NOTE)
        continue;
      if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
        refuse("an allocated section of type " + std::to_string(s.sh_type) +
               " (initialisers, notes, ...) is not supported");
      if (s.sh_flags & SHF_TLS)
        refuse("thread-local data is not supported");
      uint64_t alignment = std::max<uint64_t>(s.sh_addralign, 1);
      if (alignment > page || (alignment & (alignment - 1)))
        refuse("a section's alignment of " + std::to_string(alignment) + " is not supported");
      checkInside(s);
      Region region = (s.sh_flags & SHF_EXECINSTR) ? Code
                      : (s.sh_flags & SHF_WRITE)   ? Writable
                                                   : ReadOnly;
      uint64_t &end = regionSize_[region];
      end = alignUp(end, alignment);
      placed_[i] = {true, region, end};
      if (s.sh_size > (uint64_t{1} << 30))
        refuse("a section is too large");
      end += s.sh_size;
    }
    for (size_t i = 1; i < symbols_.size(); ++i) {
      if (symbols_[i].st_shndx != SHN_UNDEF)
        continue;
      std::string_view name = symbolName(symbols_[i]);
      const RuntimeSymbol *found = nullptr;
      for (const RuntimeSymbol &r : runtimeSymbols())
        if (name == r.name)
          found = &r;
      if (!found)
        refuse("it imports '" + std::string(name) +
               "', which kernels may not use (only the runtime's memcpy, memmove and memset)");
      Import import;
      import.address = reinterpret_cast<uint64_t>(found->address);
      regionSize_[Code] = alignUp(regionSize_[Code], kStubBytes);
      import.stub = regionSize_[Code];
      regionSize_[Code] += kStubBytes;
      regionSize_[ReadOnly] = alignUp(regionSize_[ReadOnly], 8);
      import.got = regionSize_[ReadOnly];
      regionSize_[ReadOnly] += 8;
      imports_.emplace_back(i, import);
    }
    uint64_t at = 0;
    for (int r = 0; r < kRegions; ++r) {
      regionStart_[r] = at;
      at += alignUp(regionSize_[r], page);
    }
    if (at == 0)
      refuse("the object has no code");
    mappingSize_ = at;
  }

  void map() {
    void *base =
        ::mmap(nullptr, mappingSize_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
      refuse("cannot map " + std::to_string(mappingSize_) + " bytes for its code");
    mapping_ = std::make_shared<Mapping>();
    mapping_->base = base;
    mapping_->size = mappingSize_;
  }

  uint64_t regionAddress(Region region, uint64_t offset) const {
    return reinterpret_cast<uint64_t>(mapping_->base) + regionStart_[region] + offset;
  }
  uint64_t sectionAddress(size_t section) const {
    return regionAddress(placed_[section].region, placed_[section].offset);
  }

  void copySections() {
    for (size_t i = 0; i < sections_.size(); ++i)
      if (placed_[i].loaded && sections_[i].sh_type == SHT_PROGBITS)
        std::memcpy(reinterpret_cast<void *>(sectionAddress(i)),
                    bytes_.data() + sections_[i].sh_offset, sections_[i].sh_size);
  }

  const Import *importOf(uint32_t symbol) const {
    for (const auto &[index, import] : imports_)
      if (index == symbol)
        return &import;
    return nullptr;
  }

  // The address a relocation against `symbol` means (S in the psABI).
  uint64_t symbolAddress(uint32_t index) const {
    if (index >= symbols_.size())
      refuse("a relocation names a symbol that does not exist");
    const Elf64_Sym &s = symbols_[index];
    if (const Import *import = importOf(index))
      return import->address;
    if (s.st_shndx == SHN_ABS)
      return s.st_value;
    if (s.st_shndx >= SHN_LORESERVE || s.st_shndx >= sections_.size() ||
        !placed_[s.st_shndx].loaded)
      refuse("a relocation refers to '" + std::string(symbolName(s)) +
             "', which is not in a loaded section");
    return sectionAddress(s.st_shndx) + s.st_value;
  }

  void relocate() {
    for (const Elf64_Shdr &rela : sections_) {
      if (rela.sh_type == SHT_REL)
        refuse("REL relocations are not supported (x86-64 and AArch64 objects use RELA)");
      if (rela.sh_type != SHT_RELA)
        continue;
      if (rela.sh_info >= sections_.size())
        refuse("a relocation section names no section");
      // Relocations of sections that are not loaded (.stack_sizes, which
      // `lanejit inspect` reads from the object) have nothing to patch.
      if (!placed_[rela.sh_info].loaded)
        continue;
      if (rela.sh_entsize != sizeof(Elf64_Rela))
        refuse("unexpected relocation entry size");
      checkInside(rela);
      const Elf64_Shdr &target = sections_[rela.sh_info];
      if (target.sh_type == SHT_NOBITS)
        refuse("relocations in a section without contents");
      for (uint64_t at = 0; at + sizeof(Elf64_Rela) <= rela.sh_size; at += sizeof(Elf64_Rela))
        apply(read<Elf64_Rela>(rela.sh_offset + at), rela.sh_info);
    }
  }

  template <typename T> void patch(uint64_t place, T value) const {
    std::memcpy(reinterpret_cast<void *>(place), &value, sizeof(T));
  }

  // The loader chooses the address a relocation means (the symbol, an
  // import's stub or GOT slot); elf_relocations.h does the arithmetic.
  void apply(const Elf64_Rela &r, size_t section) const {
    uint32_t type = ELF64_R_TYPE(r.r_info);
    uint32_t symbol = ELF64_R_SYM(r.r_info);
    const RelocationKind *kind = relocationKind(machine_, type);
    if (!kind)
      refuse(std::string(machineName(machine_)) + " relocation type " + std::to_string(type) +
             " is not supported");
    if (kind->width == 0)
      return;
    if (r.r_offset > sections_[section].sh_size ||
        sections_[section].sh_size - r.r_offset < kind->width)
      refuse(std::string("a relocation (") + kind->name + ") lies outside its section");
    uint64_t place = sectionAddress(section) + r.r_offset;
    auto addend = static_cast<uint64_t>(r.r_addend);
    const Import *import = importOf(symbol);
    uint64_t target = 0;
    switch (kind->target) {
    case RelocationTarget::Symbol: target = symbolAddress(symbol); break;
    case RelocationTarget::Call:
      // Calls to an import go through its stub, which is near the code.
      target = import ? regionAddress(Code, import->stub) : symbolAddress(symbol);
      break;
    case RelocationTarget::GotEntry:
      if (r.r_addend != 0)
        refuse(std::string(kind->name) +
               " with an addend (a GOT entry for S + A) is not supported");
      [[fallthrough]];
    case RelocationTarget::GotSlot:
      if (!import)
        refuse(std::string("a GOT-relative relocation (") + kind->name +
               ") of a symbol the kernel defines");
      target = regionAddress(ReadOnly, import->got);
      break;
    }
    try {
      applyRelocation(machine_, type, reinterpret_cast<unsigned char *>(place), place,
                      target + addend);
    } catch (const Error &e) {
      refuse(e.what());
    }
  }

  void writeImports() const {
    for (const auto &[index, import] : imports_) {
      std::array<unsigned char, kStubBytes> stub = importStub(machine_, import.address);
      std::memcpy(reinterpret_cast<void *>(regionAddress(Code, import.stub)), stub.data(),
                  stub.size());
      patch(regionAddress(ReadOnly, import.got), import.address);
    }
  }

  // AArch64's instruction cache does not see the data cache's writes:
  // clean and invalidate the code's lines before it runs (a no-op on x86).
  void flushInstructionCache() const {
    char *code = static_cast<char *>(mapping_->base) + regionStart_[Code];
    __builtin___clear_cache(code, code + regionSize_[Code]);
  }

  void protect() const {
    const int modes[kRegions] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
    for (int r = 0; r < kRegions; ++r) {
      uint64_t end = r + 1 < kRegions ? regionStart_[r + 1] : mappingSize_;
      if (end == regionStart_[r])
        continue;
      if (::mprotect(static_cast<char *>(mapping_->base) + regionStart_[r], end - regionStart_[r],
                     modes[r]) != 0)
        refuse("cannot set the protection of its memory");
    }
  }

  uint64_t findEntry() const {
    for (const Elf64_Sym &s : symbols_) {
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF ||
          ELF64_ST_BIND(s.st_info) == STB_LOCAL || symbolName(s) != entry_)
        continue;
      if (s.st_shndx >= sections_.size() || !placed_[s.st_shndx].loaded ||
          placed_[s.st_shndx].region != Code)
        refuse("its entry is not in its code");
      return sectionAddress(s.st_shndx) + s.st_value;
    }
    refuse("it defines no function '" + entry_ + "'");
  }

  uint16_t machine_;
  std::string_view bytes_;
  const std::string &entry_;
  std::vector<Elf64_Shdr> sections_;
  size_t symtab_ = 0;
  std::vector<Elf64_Sym> symbols_;
  std::vector<Placed> placed_;
  std::vector<std::pair<uint32_t, Import>> imports_;
  uint64_t regionSize_[kRegions] = {};
  uint64_t regionStart_[kRegions] = {};
  uint64_t mappingSize_ = 0;
  std::shared_ptr<Mapping> mapping_;
};

} // namespace

uint16_t hostElfMachine() {
#if defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__x86_64__)
  return EM_X86_64;
#else
#error "the object loader knows x86-64 and AArch64 objects only"
#endif
}

LinkedCode loadObject(std::string_view object, const std::string &entry) {
  return Loader(hostElfMachine(), object, entry).load();
}

LinkedCode loadObjectFor(uint16_t machine, std::string_view object, const std::string &entry) {
  if (machine != EM_X86_64 && machine != EM_AARCH64)
    throw Error(Error::Kind::Compile, "loading kernel '" + entry + "': objects of ELF machine " +
                                          std::to_string(machine) + " are not supported");
  return Loader(machine, object, entry).load();
}

} // namespace lanejit::jit
