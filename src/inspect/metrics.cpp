#include "inspect/metrics.h"

#include "inspect/prologue.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace lanejit::inspect {
namespace {

enum class Access { None, Vector, Masked, Broadcast, Gather, Scalar, Stack, Constant };

std::string mnemonic(const std::string &text) {
  return text.substr(0, text.find(' '));
}

bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}

// What a function's code needs to classify its instructions: which
// register addresses the frame, and (AArch64) which memory operations read
// a page an adrp formed.
struct FunctionContext {
  Arch arch = Arch::X86_64;
  bool framePointer = false;
  std::set<uint64_t> adrpBased; // offsets of loads off an adrp's register
};

// ---- x86-64 (Intel syntax) ----

// What the instruction's memory operand moves; None when it has none
// (push/pop/call move memory too, but implicitly: they are not counted).
Access classifyX86(const DecodedInstruction &inst, bool rbpIsFrame) {
  const std::string &t = inst.text;
  size_t ptr = t.find(" ptr [");
  if (ptr == std::string::npos)
    return Access::None;
  std::string op = mnemonic(t);
  if (startsWith(op, "vgather") || startsWith(op, "vpgather") || startsWith(op, "vscatter") ||
      startsWith(op, "vpscatter"))
    return Access::Gather;
  size_t close = t.find(']', ptr);
  std::string address =
      t.substr(ptr + 5, close == std::string::npos ? std::string::npos : close - ptr - 4);
  if (address.find("rsp") != std::string::npos ||
      (rbpIsFrame && address.find("rbp") != std::string::npos))
    return Access::Stack;
  if (address.find("rip") != std::string::npos)
    return Access::Constant;
  if (t.find("{k") != std::string::npos || op.find("maskmov") != std::string::npos)
    return Access::Masked;
  if (t.find("{1to") != std::string::npos || startsWith(op, "vbroadcast") ||
      startsWith(op, "vpbroadcast"))
    return Access::Broadcast;
  size_t word = t.rfind(' ', ptr - 1);
  std::string size = t.substr(word + 1, ptr - word - 1);
  if (size == "xmmword" || size == "ymmword" || size == "zmmword")
    return Access::Vector;
  return Access::Scalar;
}

int vectorBitsX86(const DecodedInstruction &inst) {
  int widest = 0;
  for (auto [word, bits] :
       {std::pair{"xmmword ptr", 128}, {"ymmword ptr", 256}, {"zmmword ptr", 512}})
    if (inst.text.find(word) != std::string::npos)
      widest = std::max(widest, bits);
  return widest;
}

// ---- AArch64 (generic syntax: "ldp q0, q1, [x8], #32") ----

// The register an AArch64 memory operand is based on: "x8" of "[x8, #16]".
std::string baseRegister(const std::string &t) {
  size_t open = t.find('[');
  if (open == std::string::npos)
    return "";
  size_t end = t.find_first_of(",]", open);
  return t.substr(open + 1, end == std::string::npos ? std::string::npos : end - open - 1);
}

// Lanes of an arrangement suffix ("4s" -> 4, "16b" -> 16); 0 if none.
int lanesOf(const std::string &operand) {
  size_t dot = operand.find('.');
  if (dot == std::string::npos || dot + 1 >= operand.size() ||
      !std::isdigit(static_cast<unsigned char>(operand[dot + 1])))
    return 0;
  return std::atoi(operand.c_str() + dot + 1);
}

// The operands of an instruction's text, split at top-level commas ("{ v0.4s, v1.4s }" is one).
std::vector<std::string> operands(const std::string &t) {
  std::vector<std::string> out;
  size_t space = t.find(' ');
  if (space == std::string::npos)
    return out;
  std::string current;
  int depth = 0;
  for (size_t i = space + 1; i < t.size(); ++i) {
    char c = t[i];
    if (c == '{' || c == '[')
      ++depth;
    if (c == '}' || c == ']')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    if (c != ' ' || !current.empty())
      current += c;
  }
  if (!current.empty())
    out.push_back(current);
  return out;
}

bool isRegister(const std::string &op, char bank) {
  return op.size() >= 2 && op[0] == bank &&
         std::all_of(op.begin() + 1, op.end(), [](char c) { return std::isdigit(c); });
}

// A whole SIMD register operand: qN, or vN.<arrangement> of 2 or more lanes
// (not an element, "v29.s[0]", and not a lane list's element type, "{ v0.s }").
bool isWholeVector(const std::string &op) {
  if (isRegister(op, 'q'))
    return true;
  return op.size() > 1 && op[0] == 'v' && std::isdigit(static_cast<unsigned char>(op[1])) &&
         op.find('[') == std::string::npos && lanesOf(op) >= 2;
}

// 128 for q and 16-byte arrangements, 64 for 8-byte ones ("2s"), 0 else.
int registerBits(const std::string &op) {
  if (isRegister(op, 'q'))
    return 128;
  int lanes = lanesOf(op);
  if (lanes < 2)
    return 0;
  char type = op.back();
  int element = type == 'b' ? 8 : type == 'h' ? 16 : type == 's' ? 32 : type == 'd' ? 64 : 0;
  return lanes * element;
}

bool isMemoryA64(const DecodedInstruction &inst) {
  return (inst.may_load || inst.may_store) && inst.text.find('[') != std::string::npos &&
         !startsWith(inst.text, "prfm");
}

Access classifyA64(const DecodedInstruction &inst, const FunctionContext &fc) {
  if (!isMemoryA64(inst))
    return Access::None;
  const std::string &t = inst.text;
  std::string base = baseRegister(t);
  if (base == "sp" || (fc.framePointer && base == "x29"))
    return Access::Stack;
  // Relocatable: the lo12 relocation of "ldr q0, [x8, :lo12:.LCPI0_0]"
  // names the pool; linked: the base register holds an adrp's page.
  if (!inst.relocation_symbol.empty() || fc.adrpBased.count(inst.offset))
    return Access::Constant;
  std::string op = mnemonic(t);
  if (t.find("}[") != std::string::npos)
    return Access::Masked; // one lane: NEON's piece of a masked access
  if (op.size() == 4 && startsWith(op, "ld") && op[3] == 'r')
    return Access::Broadcast; // ld1r .. ld4r
  std::vector<std::string> ops = operands(t);
  std::string data = ops.empty() ? "" : ops[0];
  if (!data.empty() && data[0] == '{')
    data = data.substr(data.find_first_not_of("{ "));
  data = data.substr(0, data.find_first_of(" ,}"));
  return isWholeVector(data) ? Access::Vector : Access::Scalar;
}

int vectorBitsA64(const DecodedInstruction &inst, const FunctionContext &fc) {
  if (classifyA64(inst, fc) != Access::Vector)
    return 0;
  std::vector<std::string> ops = operands(inst.text);
  std::string data = ops.empty() ? "" : ops[0];
  if (!data.empty() && data[0] == '{')
    data = data.substr(data.find_first_not_of("{ "));
  return registerBits(data.substr(0, data.find_first_of(" ,}")));
}

// ---- both ----

Access classify(const DecodedInstruction &inst, const FunctionContext &fc) {
  return fc.arch == Arch::AArch64 ? classifyA64(inst, fc) : classifyX86(inst, fc.framePointer);
}

void count(MemoryOps &ops, Access a) {
  switch (a) {
  case Access::Vector: ++ops.vector; break;
  case Access::Masked: ++ops.masked; break;
  case Access::Broadcast: ++ops.broadcast; break;
  case Access::Gather: ++ops.gather; break;
  case Access::Scalar: ++ops.scalar; break;
  case Access::Stack: ++ops.stack; break;
  case Access::Constant: ++ops.constant; break;
  case Access::None: break;
  }
}

FunctionContext context(const DecodedFunction &fn, Arch arch) {
  FunctionContext fc;
  fc.arch = arch;
  // The frame register addresses the frame only when the prologue made it
  // the frame pointer; otherwise it is one more general register.
  fc.framePointer =
      std::any_of(fn.instructions.begin(), fn.instructions.end(), [&](const DecodedInstruction &i) {
        if (arch == Arch::X86_64)
          return i.text == "mov rbp, rsp";
        return i.text == "mov x29, sp" || startsWith(i.text, "add x29, sp, ");
      });
  if (arch != Arch::AArch64)
    return fc;
  // Registers holding an adrp's page (a linked object's constant pool
  // address) until something else writes them.
  std::set<std::string> pages;
  for (const DecodedInstruction &inst : fn.instructions) {
    std::vector<std::string> ops = operands(inst.text);
    std::string op = mnemonic(inst.text);
    if (isMemoryA64(inst)) {
      if (inst.may_load && pages.count(baseRegister(inst.text)))
        fc.adrpBased.insert(inst.offset);
      if (inst.may_load && !ops.empty())
        pages.erase(ops[0]);
      continue;
    }
    if (ops.empty())
      continue;
    if (op == "adrp")
      pages.insert(ops[0]);
    else if (op == "add" && ops.size() >= 2 && pages.count(ops[1]))
      pages.insert(ops[0]); // "add x8, x8, :lo12:sym": the address itself
    else
      pages.erase(ops[0]);
  }
  return fc;
}

void countInstruction(const DecodedInstruction &inst, const FunctionContext &fc, MemoryOps &loads,
                      MemoryOps &stores) {
  Access a = classify(inst, fc);
  bool load = inst.may_load, store = inst.may_store;
  // LLVM marks the vmaskmov store form as loading too; the operand order
  // says which it is (a store's memory operand comes first).
  if (fc.arch == Arch::X86_64 && mnemonic(inst.text).find("maskmov") != std::string::npos) {
    std::string rest = inst.text.substr(inst.text.find(' ') + 1);
    store = rest.find(" ptr [") < rest.find(',');
    load = !store;
  }
  if (load)
    count(loads, a);
  if (store)
    count(stores, a);
}

bool isFma(const std::string &op, Arch arch) {
  if (arch == Arch::X86_64)
    return op.find("fmadd") != std::string::npos || op.find("fmsub") != std::string::npos ||
           op.find("fnmadd") != std::string::npos || op.find("fnmsub") != std::string::npos;
  return startsWith(op, "fmla") || startsWith(op, "fmls") || op == "fmadd" || op == "fmsub" ||
         op == "fnmadd" || op == "fnmsub" || startsWith(op, "bfmla");
}

// Memory moves are what loads/stores count; the mix is what computes (an
// x86 instruction with a memory source, vaddps zmm0, zmm1, [rax], does).
void countMix(const DecodedInstruction &inst, Arch arch, InstructionMix &mix) {
  ++mix.total;
  if (inst.is_branch && !inst.is_call)
    ++mix.branch;
  std::string op = mnemonic(inst.text);
  if (isFma(op, arch))
    ++mix.fma;
  if (arch == Arch::X86_64) {
    const std::string &t = inst.text;
    bool move = op.find("mov") != std::string::npos || op.find("broadcast") != std::string::npos ||
                op.find("gather") != std::string::npos || op.find("scatter") != std::string::npos;
    if ((inst.may_load || inst.may_store) && move)
      return;
    if (op.empty() || startsWith(op, "vbroadcast"))
      return;
    bool simd = t.find("xmm") != std::string::npos || t.find("ymm") != std::string::npos ||
                t.find("zmm") != std::string::npos;
    if (!simd)
      return;
    bool scalar = op.size() > 2 && (op.ends_with("ss") || op.ends_with("sd") || op.ends_with("sh"));
    ++(scalar ? mix.scalar_fp : mix.vector);
    return;
  }
  if (isMemoryA64(inst))
    return;
  std::vector<std::string> ops = operands(inst.text);
  if (std::any_of(ops.begin(), ops.end(), isWholeVector)) {
    ++mix.vector;
    return;
  }
  bool fpRegister = std::any_of(ops.begin(), ops.end(), [](const std::string &o) {
    return isRegister(o, 's') || isRegister(o, 'd') || isRegister(o, 'h');
  });
  if (fpRegister)
    ++mix.scalar_fp;
}

// ---- loops: natural loops of the control-flow graph ----

struct Block {
  size_t first = 0, last = 0; // instruction indices, inclusive
  std::vector<size_t> successors;
};

std::vector<Block> blocks(const DecodedFunction &fn) {
  const auto &code = fn.instructions;
  std::set<uint64_t> leaders{0};
  std::map<uint64_t, size_t> at; // offset -> instruction index
  for (size_t i = 0; i < code.size(); ++i) {
    at[code[i].offset] = i;
    const DecodedInstruction &inst = code[i];
    bool ends = (inst.is_branch && !inst.is_call) || inst.is_return || !inst.falls_through;
    if (ends && i + 1 < code.size())
      leaders.insert(code[i + 1].offset);
    if (inst.is_branch && !inst.is_call && inst.branch_target && *inst.branch_target >= 0)
      leaders.insert(static_cast<uint64_t>(*inst.branch_target));
  }
  std::vector<Block> out;
  std::map<uint64_t, size_t> blockAt;
  for (size_t i = 0; i < code.size(); ++i) {
    if (leaders.count(code[i].offset) || out.empty()) {
      blockAt[code[i].offset] = out.size();
      out.push_back(Block{i, i, {}});
    }
    out.back().last = i;
  }
  for (size_t b = 0; b < out.size(); ++b) {
    const DecodedInstruction &end = code[out[b].last];
    if (end.is_branch && !end.is_call && end.branch_target && *end.branch_target >= 0)
      if (auto it = blockAt.find(static_cast<uint64_t>(*end.branch_target)); it != blockAt.end())
        out[b].successors.push_back(it->second);
    if (end.falls_through && !end.is_return && b + 1 < out.size())
      out[b].successors.push_back(b + 1);
  }
  return out;
}

// Immediate dominators (Cooper, Harvey and Kennedy) over the blocks
// reachable from the entry; -1 for the unreachable.
std::vector<int> dominators(const std::vector<Block> &g) {
  size_t n = g.size();
  std::vector<int> post(n, -1), rpo;
  std::vector<std::pair<size_t, size_t>> stack{{0, 0}};
  std::vector<bool> seen(n, false);
  seen[0] = true;
  while (!stack.empty()) {
    auto &[b, next] = stack.back();
    if (next < g[b].successors.size()) {
      size_t s = g[b].successors[next++];
      if (!seen[s]) {
        seen[s] = true;
        stack.push_back({s, 0});
      }
      continue;
    }
    post[b] = static_cast<int>(rpo.size());
    rpo.push_back(static_cast<int>(b));
    stack.pop_back();
  }
  std::reverse(rpo.begin(), rpo.end());

  std::vector<std::vector<size_t>> preds(n);
  for (size_t b = 0; b < n; ++b)
    for (size_t s : g[b].successors)
      preds[s].push_back(b);
  std::vector<int> idom(n, -1);
  idom[0] = 0;
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (post[a] < post[b])
        a = idom[a];
      while (post[b] < post[a])
        b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int b : rpo) {
      if (b == 0)
        continue;
      int dom = -1;
      for (size_t p : preds[b])
        if (idom[p] >= 0)
          dom = dom < 0 ? static_cast<int>(p) : intersect(static_cast<int>(p), dom);
      if (dom >= 0 && idom[b] != dom) {
        idom[b] = dom;
        changed = true;
      }
    }
  }
  return idom;
}

bool dominates(const std::vector<int> &idom, int a, int b) {
  while (true) {
    if (a == b)
      return true;
    if (b == 0 || idom[b] < 0)
      return false;
    b = idom[b];
  }
}

struct LoopBlocks {
  Loop loop;
  size_t header = 0;
  std::set<size_t> members; // block indices
};

// One loop per header: the blocks that reach a back edge's source without
// passing the header. Layout does not matter: an out-of-line block that
// branches back (a scalarized masked load's lane blocks on AArch64) is no
// loop unless its target dominates it.
std::vector<LoopBlocks> naturalLoops(const std::vector<Block> &g) {
  std::vector<LoopBlocks> loops;
  if (g.empty())
    return loops;
  std::vector<int> idom = dominators(g);
  std::vector<std::vector<size_t>> preds(g.size());
  for (size_t b = 0; b < g.size(); ++b)
    for (size_t s : g[b].successors)
      preds[s].push_back(b);
  std::map<size_t, size_t> byHeader;
  for (size_t b = 0; b < g.size(); ++b) {
    if (idom[b] < 0)
      continue;
    for (size_t h : g[b].successors) {
      if (!dominates(idom, static_cast<int>(h), static_cast<int>(b)))
        continue;
      auto [it, fresh] = byHeader.try_emplace(h, loops.size());
      if (fresh) {
        loops.push_back(LoopBlocks{});
        loops.back().header = h;
        loops.back().members.insert(h);
      }
      std::set<size_t> &members = loops[it->second].members;
      std::vector<size_t> work{b};
      while (!work.empty()) {
        size_t x = work.back();
        work.pop_back();
        if (!members.insert(x).second)
          continue;
        for (size_t p : preds[x])
          if (idom[p] >= 0)
            work.push_back(p);
      }
    }
  }
  return loops;
}

std::string plural(int n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void describeBodies(FunctionReport &r, Arch arch) {
  std::string helpers;
  for (const CallSite &c : r.calls)
    if (c.internal && helpers.find(c.target) == std::string::npos)
      helpers += (helpers.empty() ? "" : ", ") + c.target;
  int vectorOps = r.loads.vector + r.stores.vector + r.loads.masked + r.stores.masked;
  if (r.dense_loops > 0 && r.masked_loops == 0)
    r.full_packet_body = "inlined: " + plural(r.dense_loops, "dense loop") + ", no lane mask";
  else if (r.dense_loops > 0)
    r.full_packet_body = "inlined: " + plural(r.dense_loops, "dense loop") + ", " +
                         plural(r.masked_loops, "masked loop");
  else if (r.masked_loops > 0)
    r.full_packet_body = "inlined, masked: " + plural(r.masked_loops, "masked loop") +
                         " (full packets pay the mask)";
  else if (!helpers.empty())
    r.full_packet_body = "outlined: calls " + helpers;
  else if (vectorOps > 0)
    r.full_packet_body = "straight-line vector code (no loop)";
  else
    r.full_packet_body = "none";

  // NEON has no masks: a masked access is one conditional access per lane.
  const char *maskedOp = arch == Arch::AArch64 ? "single-lane memory op" : "masked memory op";
  if (r.masked_outside_loops > 0)
    r.tail_body = "inlined: " + plural(r.masked_outside_loops, maskedOp) +
                  " outside the packet loops";
  else if (r.masked_loops > 0)
    r.tail_body = "runs in the masked loop";
  else if (!helpers.empty())
    r.tail_body = "outlined: calls " + helpers;
  else
    r.tail_body = "none (no masked memory operations)";
  if (r.scalar_loops > 0)
    r.tail_body += "; " + plural(r.scalar_loops, "scalar loop") + " (element at a time)";
}

} // namespace

FunctionReport measureFunction(const DecodedFunction &fn, const DecodedObject &object,
                               const McaModel *mca, std::string *mcaProblem) {
  FunctionReport r;
  r.name = fn.name;
  r.address = fn.address;
  r.bytes = fn.bytes;
  r.instructions = static_cast<int>(fn.instructions.size());
  if (fn.stack_size) {
    r.stack_frame = static_cast<int64_t>(*fn.stack_size);
    r.stack_source = "stack-sizes section";
  } else {
    PrologueFrame prologue = readPrologue(fn, object.arch);
    r.stack_frame = prologue.bytes;
    r.stack_source = prologue.bytes < 0 ? "unknown" : "prologue";
    r.stack_alignment = prologue.alignment;
  }
  // "[rsp - 112]": the leaf function's red zone, below the stack pointer
  // (x86-64 SysV; AAPCS64 has none).
  if (object.arch == Arch::X86_64)
    for (const DecodedInstruction &inst : fn.instructions)
      for (size_t at = inst.text.find("[rsp - "); at != std::string::npos;
           at = inst.text.find("[rsp - ", at + 1))
        r.red_zone =
            std::max<int64_t>(r.red_zone, std::strtoll(inst.text.c_str() + at + 7, nullptr, 0));
  FunctionContext fc = context(fn, object.arch);
  for (const DecodedInstruction &inst : fn.instructions)
    r.vector_bits = std::max(r.vector_bits, object.arch == Arch::AArch64
                                                ? vectorBitsA64(inst, fc)
                                                : vectorBitsX86(inst));
  for (const DecodedInstruction &inst : fn.instructions) {
    countInstruction(inst, fc, r.loads, r.stores);
    countMix(inst, object.arch, r.mix);
    if (!inst.is_call)
      continue;
    CallSite call;
    call.offset = inst.offset;
    call.target = inst.target.empty() ? "indirect" : inst.target;
    call.internal = std::find(object.defined.begin(), object.defined.end(), call.target) !=
                    object.defined.end();
    r.calls.push_back(call);
  }

  std::vector<Block> g = blocks(fn);
  std::vector<LoopBlocks> found = naturalLoops(g);
  std::vector<bool> inInnermost(fn.instructions.size(), false);
  for (LoopBlocks &l : found) {
    l.loop.innermost = std::none_of(found.begin(), found.end(), [&](const LoopBlocks &o) {
      return &o != &l && l.members.count(o.header);
    });
    l.loop.begin = fn.instructions[g[*l.members.begin()].first].offset;
    for (size_t b : l.members) {
      const DecodedInstruction &last = fn.instructions[g[b].last];
      l.loop.begin = std::min(l.loop.begin, fn.instructions[g[b].first].offset);
      l.loop.end = std::max(l.loop.end, last.offset + last.size);
    }
    std::vector<size_t> body; // instruction indices in address order
    for (size_t b : l.members)
      for (size_t i = g[b].first; i <= g[b].last; ++i)
        body.push_back(i);
    std::sort(body.begin(), body.end());
    for (size_t i : body) {
      const DecodedInstruction &inst = fn.instructions[i];
      ++l.loop.instructions;
      countInstruction(inst, fc, l.loop.loads, l.loop.stores);
      countMix(inst, object.arch, l.loop.mix);
      if (l.loop.innermost)
        inInnermost[i] = true;
    }
    if (l.loop.innermost && mca) {
      std::string problem;
      std::optional<double> cycles = mca->cyclesPerIteration(fn, body, &problem);
      if (cycles)
        l.loop.mca_cycles = *cycles;
      else if (mcaProblem && mcaProblem->empty())
        *mcaProblem = problem;
    }
  }
  std::sort(found.begin(), found.end(), [](const LoopBlocks &a, const LoopBlocks &b) {
    return a.loop.begin != b.loop.begin ? a.loop.begin < b.loop.begin : a.loop.end > b.loop.end;
  });
  for (const LoopBlocks &l : found)
    r.loops.push_back(l.loop);

  for (const Loop &l : r.loops) {
    if (!l.innermost)
      continue;
    const MemoryOps &in = l.loads, &out = l.stores;
    if (in.masked + out.masked > 0)
      ++r.masked_loops;
    else if (in.vector + out.vector > 0)
      ++r.dense_loops;
    else if (in.scalar + out.scalar > 0 &&
             in.broadcast + out.broadcast + in.gather + out.gather == 0)
      ++r.scalar_loops;
  }
  for (size_t i = 0; i < fn.instructions.size(); ++i)
    if (!inInnermost[i] && classify(fn.instructions[i], fc) == Access::Masked)
      ++r.masked_outside_loops;
  describeBodies(r, object.arch);
  return r;
}

} // namespace lanejit::inspect
