// lanejit/inspect.h — what the machine code of a compiled kernel does.
//
//   ObjectReport r = inspect::inspectKernel(compile(library::rope()));
//   std::cout << inspect::toText(r);
//
// Everything here is read from an ELF object, x86-64 or AArch64: the
// relocatable object the JIT linked (Kernel::object()), one `lanejit aot`
// wrote, or a shared object from a C++ compiler (e.g. a TorchInductor
// kernel's .so). Function symbols and
// sizes come from the symbol table, frame sizes from the .stack_sizes
// section (else the prologue), instructions from LLVM's MC disassembler,
// call targets from the relocations (in a shared object: the PLT and GOT),
// innermost loops' cycles per iteration from LLVM's MCA library (llvm-mca)
// for a named CPU. Nothing is estimated from IR. docs/inspect.md explains
// each field and its limits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit {
class Kernel;
}

namespace lanejit::inspect {

// Memory instructions of one direction (loads or stores), by what they move.
// An instruction that both loads and stores counts in both.
struct MemoryOps {
  int vector = 0;    // a whole xmm/ymm/zmm (AArch64: q, or v with all lanes) operand, no mask
  // Vector with a lane mask ({k} on AVX-512, vmaskmov on AVX); on AArch64
  // (NEON has no masks) one lane of a vector register (ld1/st1 {vN.s}[i]).
  int masked = 0;
  int broadcast = 0; // one element to every lane ({1toN}, vbroadcast; ld1r)
  int gather = 0;    // vgather/vscatter
  int scalar = 0;    // 1-8 bytes (float or integer), not stack or constant
  int stack = 0;     // any size, addressed off rsp/rbp (AArch64: sp/x29): spills, locals
  // Any size, from a constant pool (splats, lane iota): rip-relative; on
  // AArch64 a relocation's (relocatable) or an adrp's page (linked).
  int constant = 0;
  int total() const { return vector + masked + broadcast + gather + scalar + stack + constant; }
  bool operator==(const MemoryOps &) const = default;
};

// Non-memory instructions by kind (an instruction may count in several).
struct InstructionMix {
  int vector = 0;    // on whole SIMD registers: packed xmm/ymm/zmm ops, NEON vN.4s/.2d/...
  int scalar_fp = 0; // scalar floating point (x86 *ss/*sd; AArch64 s/d/h registers)
  int fma = 0;       // fused multiply-adds, vector or scalar (also counted above)
  int branch = 0;    // jumps and branches, conditional or not
  int total = 0;     // every instruction
  bool operator==(const InstructionMix &) const = default;
};

struct CallSite {
  uint64_t offset = 0;   // of the call instruction, from the function start
  std::string target;    // symbol name (through the PLT: the import's), or "indirect"
  bool internal = false; // the target is defined in the same object
};

// A natural loop of the function's control flow (a branch back to a block
// that dominates it): [begin, end) spans its blocks (function-relative
// offsets); its counts are over its blocks only. Innermost: holds no other
// loop's header.
struct Loop {
  uint64_t begin = 0, end = 0;
  bool innermost = false;
  int instructions = 0;
  MemoryOps loads, stores;
  InstructionMix mix;
  // Innermost loops: llvm-mca's cycles per iteration of the loop's blocks
  // in address order, for ObjectReport::mca_cpu; 0 when not estimated.
  double mca_cycles = 0;
};

struct FunctionReport {
  std::string name;
  // The symbol's value: its offset in its section in a relocatable object,
  // its virtual address in a shared object or executable.
  uint64_t address = 0;
  uint64_t bytes = 0;
  int instructions = 0;
  int64_t stack_frame = -1; // bytes; -1 when unknown
  std::string stack_source; // "stack-sizes section", "prologue" or "unknown"
  // The prologue's "and rsp, -N" realignment (N bytes), 0 if none: its
  // padding depends on the caller's rsp and is not in stack_frame.
  int64_t stack_alignment = 0;
  // Deepest byte used below rsp (the red zone a leaf function may use
  // without moving rsp); not part of stack_frame.
  int64_t red_zone = 0;
  std::vector<CallSite> calls;
  MemoryOps loads, stores;
  InstructionMix mix;
  int vector_bits = 0; // widest vector memory operand (128, 256, 512), 0 if none
  std::vector<Loop> loops;
  // Innermost loops that move packets: with vector memory operations and
  // no lane mask (dense), or with masked ones (masked).
  int dense_loops = 0, masked_loops = 0;
  // Innermost loops that move elements one at a time: scalar loads or
  // stores and no vector, masked, broadcast or gather ones (a scalar tail
  // loop would be one).
  int scalar_loops = 0;
  // Masked memory operations outside every innermost loop (a tail body laid
  // out after its loop).
  int masked_outside_loops = 0;
  // How the packet bodies appear in this function's code, in words derived
  // from the counts above and the calls (docs/inspect.md).
  std::string full_packet_body;
  std::string tail_body;
};

struct ObjectReport {
  std::string format; // e.g. "elf64-x86-64"
  std::string kind;   // "relocatable", "shared object" or "executable"
  std::string triple;
  std::string arch; // "x86-64" or "aarch64"
  std::vector<FunctionReport> functions; // by address
  std::vector<std::string> undefined;    // imported symbols, sorted
  // The CPU llvm-mca modelled for Loop::mca_cycles ("" when none was), and
  // why loops carry no estimate when some do not ("" when all do).
  std::string mca_cpu;
  std::string mca_note;
};

// The CPU (LLVM's name, e.g. "apple-m1", "znver4") and feature string the
// loop estimates model; an empty cpu is the architecture's generic model.
struct McaTarget {
  std::string cpu, features;
  bool enabled = true;
};

// Throws Error(Kind::Io) when `bytes` is not an object LLVM can read or its
// code cannot be disassembled.
ObjectReport inspectObject(std::string_view bytes);
// Only the named functions, each with the parts the compiler split off it
// and named after it ("kernel" keeps kernel.cold and kernel._omp_fn.0: a
// '.' is in no C or C++ name, so such a symbol is the compiler's); empty
// `functions` keeps every function. Throws Error(Kind::Bind) naming the
// first function the object does not define.
ObjectReport inspectObject(std::string_view bytes, const std::vector<std::string> &functions);
ObjectReport inspectObject(std::string_view bytes, const std::vector<std::string> &functions,
                           const McaTarget &mca);
// The kernel's object; llvm-mca models the CPU and features it was compiled for.
ObjectReport inspectKernel(const Kernel &kernel);

// Human-readable and JSON forms (the JSON's keys are the field names above).
std::string toText(const ObjectReport &report);
std::string toJson(const ObjectReport &report);
// What changed from `before` to `after`, function by function (matched by
// name with any trailing "_<digits>" dropped); "no differences" when none.
std::string diff(const ObjectReport &before, const ObjectReport &after,
                 const std::string &before_label, const std::string &after_label);
// An Intel-syntax listing of every function (or of the named ones, chosen as
// by inspectObject), call targets named.
std::string disassemble(std::string_view bytes);
std::string disassemble(std::string_view bytes, const std::vector<std::string> &functions);

// The symbols an AOT object may import (memcpy, memmove, memset), and the
// imports of `report` outside that set.
const std::vector<std::string> &allowedImports();
std::vector<std::string> disallowedImports(const ObjectReport &report);

} // namespace lanejit::inspect
