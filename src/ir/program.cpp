// Program-wide helpers: canonical traversal order and structural hash.
#include <lanejit/ir.h>

#include "hash.h"

#include <lanejit/error.h>

#include <unordered_set>

namespace lanejit {

void forEachNode(const Program &program, const std::function<void(const Expr &)> &fn) {
  // Iterative post-order DFS over the writes' DAGs, operands left to right,
  // so that long chains cannot overflow the stack.
  std::unordered_set<const Node *> done;
  struct Frame {
    Expr expr;
    size_t next;
  };
  std::vector<Frame> stack;
  for (const Write &w : program.writes) {
    if (!w.value || done.count(w.value.get()))
      continue;
    stack.push_back({w.value, 0});
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next < top.expr->args.size()) {
        const Expr &child = top.expr->args[top.next++];
        if (child && !done.count(child.get()))
          stack.push_back({child, 0});
        continue;
      }
      Expr e = top.expr;
      stack.pop_back();
      if (done.insert(e.get()).second)
        fn(e);
    }
  }
}

uint64_t Program::hash() const {
  using detail::hashMix;
  uint64_t h = detail::hashString(name);
  for (const Param &p : inputs) {
    h = hashMix(h, detail::hashString(p.name));
    h = hashMix(h, static_cast<uint64_t>(p.kind));
    h = hashMix(h, static_cast<uint64_t>(p.type));
    h = hashMix(h, p.cols.hash());
  }
  h = hashMix(h, 0xabcdef);
  for (const Output &o : outputs) {
    h = hashMix(h, detail::hashString(o.name));
    h = hashMix(h, static_cast<uint64_t>(o.type));
    h = hashMix(h, o.cols.hash());
  }
  for (const Write &w : writes) {
    h = hashMix(h, static_cast<uint64_t>(w.output));
    h = hashMix(h, w.begin.hash());
    h = hashMix(h, w.len.hash());
    h = hashMix(h, w.value ? w.value->hash : 0);
  }
  return h;
}

int Program::inputIndex(std::string_view n) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == n)
      return static_cast<int>(i);
  return -1;
}

int Program::outputIndex(std::string_view n) const {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == n)
      return static_cast<int>(i);
  return -1;
}

Program withStorage(Program program, DType storage) {
  auto floating = [](DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; };
  if (!floating(storage))
    throw Error(Error::Kind::Verify, "program '" + program.name + "': cannot hold its buffers as " +
                                         std::string(name(storage)) + " (f32, bf16 or f16)");
  for (Param &p : program.inputs)
    if (p.type == DType::F32)
      p.type = storage;
  for (Output &o : program.outputs)
    if (o.type == DType::F32)
      o.type = storage;
  return program;
}

} // namespace lanejit
