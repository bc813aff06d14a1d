#include "inspect/metrics.h"

#include "inspect/prologue.h"

#include <algorithm>
#include <cstdlib>
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

// What the instruction's memory operand moves; None when it has none
// (push/pop/call move memory too, but implicitly: they are not counted).
Access classify(const DecodedInstruction &inst, bool rbpIsFrame) {
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

// rbp addresses the frame only when the prologue made it the frame
// pointer; otherwise it is one more general register.
bool usesFramePointer(const DecodedFunction &fn) {
  return std::any_of(fn.instructions.begin(), fn.instructions.end(),
                     [](const DecodedInstruction &i) { return i.text == "mov rbp, rsp"; });
}

void countInstruction(const DecodedInstruction &inst, bool rbpIsFrame, MemoryOps &loads,
                      MemoryOps &stores) {
  Access a = classify(inst, rbpIsFrame);
  bool load = inst.may_load, store = inst.may_store;
  // LLVM marks the vmaskmov store form as loading too; the operand order
  // says which it is (a store's memory operand comes first).
  if (mnemonic(inst.text).find("maskmov") != std::string::npos) {
    std::string rest = inst.text.substr(inst.text.find(' ') + 1);
    store = rest.find(" ptr [") < rest.find(',');
    load = !store;
  }
  if (load)
    count(loads, a);
  if (store)
    count(stores, a);
}

// Backward branches inside the function, one loop per target (the widest
// latch wins), then marked innermost when no other loop lies inside.
std::vector<Loop> findLoops(const DecodedFunction &fn) {
  std::vector<Loop> loops;
  for (const DecodedInstruction &inst : fn.instructions) {
    if (!inst.is_branch || !inst.branch_target || *inst.branch_target < 0 ||
        static_cast<uint64_t>(*inst.branch_target) > inst.offset)
      continue;
    uint64_t begin = static_cast<uint64_t>(*inst.branch_target), end = inst.offset + inst.size;
    auto same =
        std::find_if(loops.begin(), loops.end(), [&](const Loop &l) { return l.begin == begin; });
    if (same != loops.end())
      same->end = std::max(same->end, end);
    else
      loops.push_back(Loop{begin, end});
  }
  std::sort(loops.begin(), loops.end(),
            [](const Loop &a, const Loop &b) { return a.begin < b.begin; });
  bool rbpIsFrame = usesFramePointer(fn);
  for (Loop &l : loops) {
    l.innermost = std::none_of(loops.begin(), loops.end(), [&](const Loop &o) {
      return &o != &l && o.begin >= l.begin && o.end <= l.end;
    });
    for (const DecodedInstruction &inst : fn.instructions)
      if (inst.offset >= l.begin && inst.offset < l.end) {
        ++l.instructions;
        countInstruction(inst, rbpIsFrame, l.loads, l.stores);
      }
  }
  return loops;
}

bool insideInnermost(const std::vector<Loop> &loops, uint64_t offset) {
  return std::any_of(loops.begin(), loops.end(), [&](const Loop &l) {
    return l.innermost && offset >= l.begin && offset < l.end;
  });
}

// "[rsp - 112]": the leaf function's red zone, below the stack pointer.
int64_t redZone(const DecodedFunction &fn) {
  int64_t deepest = 0;
  for (const DecodedInstruction &inst : fn.instructions)
    for (size_t at = inst.text.find("[rsp - "); at != std::string::npos;
         at = inst.text.find("[rsp - ", at + 1))
      deepest = std::max<int64_t>(deepest, std::strtoll(inst.text.c_str() + at + 7, nullptr, 0));
  return deepest;
}

std::string plural(int n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void describeBodies(FunctionReport &r) {
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

  if (r.masked_outside_loops > 0)
    r.tail_body = "inlined: " + plural(r.masked_outside_loops, "masked memory op") +
                  " outside the packet loops";
  else if (r.masked_loops > 0)
    r.tail_body = "runs in the masked loop";
  else if (!helpers.empty())
    r.tail_body = "outlined: calls " + helpers;
  else
    r.tail_body = "none (no masked memory operations)";
}

} // namespace

FunctionReport measureFunction(const DecodedFunction &fn, const DecodedObject &object) {
  FunctionReport r;
  r.name = fn.name;
  r.address = fn.address;
  r.bytes = fn.bytes;
  r.instructions = static_cast<int>(fn.instructions.size());
  if (fn.stack_size) {
    r.stack_frame = static_cast<int64_t>(*fn.stack_size);
    r.stack_source = "stack-sizes section";
  } else {
    PrologueFrame prologue = readPrologue(fn);
    r.stack_frame = prologue.bytes;
    r.stack_source = prologue.bytes < 0 ? "unknown" : "prologue";
    r.stack_alignment = prologue.alignment;
  }
  r.red_zone = redZone(fn);
  for (const DecodedInstruction &inst : fn.instructions)
    for (auto [word, bits] :
         {std::pair{"xmmword ptr", 128}, {"ymmword ptr", 256}, {"zmmword ptr", 512}})
      if (inst.text.find(word) != std::string::npos)
        r.vector_bits = std::max(r.vector_bits, bits);
  bool rbpIsFrame = usesFramePointer(fn);
  for (const DecodedInstruction &inst : fn.instructions) {
    countInstruction(inst, rbpIsFrame, r.loads, r.stores);
    if (!inst.is_call)
      continue;
    CallSite call;
    call.offset = inst.offset;
    call.target = inst.target.empty() ? "indirect" : inst.target;
    call.internal = std::find(object.defined.begin(), object.defined.end(), call.target) !=
                    object.defined.end();
    r.calls.push_back(call);
  }
  r.loops = findLoops(fn);
  for (const Loop &l : r.loops) {
    if (!l.innermost)
      continue;
    int masked = l.loads.masked + l.stores.masked;
    if (masked > 0)
      ++r.masked_loops;
    else if (l.loads.vector + l.stores.vector > 0)
      ++r.dense_loops;
  }
  for (const DecodedInstruction &inst : fn.instructions)
    if (!insideInnermost(r.loops, inst.offset) && classify(inst, rbpIsFrame) == Access::Masked)
      ++r.masked_outside_loops;
  describeBodies(r);
  return r;
}

} // namespace lanejit::inspect
