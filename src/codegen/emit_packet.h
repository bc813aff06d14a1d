// One packet of a traversal: the loads, the arithmetic and the stores of W
// columns of one row, emitted either inline in the entry's row loop or as a
// helper function the row loop calls (the plan's inlining policy decides).
//
// A packet body performs all its loads before its first store; the alias
// analysis (lower/prove_in_place.cpp) relies on that order.
#pragma once

#include "codegen/math.h"
#include "codegen/target.h"
#include "lower/plan.h"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lanejit::codegen {

// Where a packet body finds what does not vary across the row's packets.
struct PacketScope {
  llvm::IRBuilder<> *b;                          // where the body goes
  std::function<llvm::Value *(int buffer)> base; // current row of a buffer (or its base)
  std::function<llvm::Value *(int slot)> workspace;
  std::function<llvm::Value *(const Expr &)> uniform; // row/launch value, splat
  std::function<llvm::Value *(const Dim &)> dim;      // i64 value
};

class PacketEmitter {
public:
  PacketEmitter(const lower::KernelPlan &plan, const CodegenTarget &target, CodegenCounts &counts)
      : plan_(plan), target_(target), counts_(counts) {}

  // Emits one packet of `t` at traversal column `column` (i64) of a
  // traversal of `len` columns; returns each reduction's operand with
  // inactive lanes set to the reduction's identity. `inRow`: a masked
  // packet of a column-bounded traversal that lies inside the row (column
  // + W <= the traversal's length): its loads read all W lanes, and its
  // writes store the bound's fill on the inactive lanes, so no lane-masked
  // memory operation is left (KernelEmitter::inRowTails).
  std::vector<llvm::Value *> emitBody(const lower::Traversal &t, lower::PacketKind kind,
                                      llvm::Value *column, llvm::Value *len,
                                      const PacketScope &scope, bool inRow = false);

  // Emits the body as `name(ptr env, i64 column, i64 len)`, returning the
  // reductions' operands as a struct. `env` lists what the caller must store
  // in the environment, one 8-byte slot each, in order.
  struct EnvironmentSlot {
    enum Kind { Base, Workspace, Uniform, DimValue } kind;
    int index = 0; // buffer or workspace slot
    Expr value;    // Uniform
    Dim dim;       // DimValue
  };
  using Environment = std::vector<EnvironmentSlot>;
  llvm::Function *emitHelper(const lower::Traversal &t, lower::PacketKind kind,
                             llvm::Module &module, const std::string &name, Environment &env);

  // Nonzero: dense packets store their writes (not the workspace) with
  // non-temporal stores at this alignment, which the caller guarantees.
  void setStreamingAlignment(int64_t bytes) { streamAlign_ = bytes; }

private:
  // The packet of `e` at traversal column `column` (a Slice shifts it).
  llvm::Value *lane(const Expr &e, llvm::Value *column);
  llvm::Value *compute(const Node &n, llvm::Value *column);
  // Group and repeat nodes, from their operand's workspace slot.
  llvm::Value *groupReduce(const Node &n, llvm::Value *column);
  llvm::Value *groupMaxMinOfPackets(const Node &n, llvm::Value *base, llvm::Value *column);
  llvm::Value *repeated(const Node &n, llvm::Value *column);
  llvm::Value *gather(llvm::Value *base, llvm::Value *indices, llvm::Value *passThrough);
  llvm::Value *memoryLoad(llvm::Type *type, llvm::Value *ptr, bool workspace);
  void memoryStore(llvm::Value *value, llvm::Value *ptr, bool workspace);

  const lower::KernelPlan &plan_;
  const CodegenTarget &target_;
  CodegenCounts &counts_;
  // The packet being emitted.
  const PacketScope *scope_ = nullptr;
  const lower::Traversal *traversal_ = nullptr;
  llvm::Value *column_ = nullptr;
  llvm::Value *mask_ = nullptr; // <W x i1>, Masked only
  bool inRow_ = false;          // emitBody's inRow
  int64_t streamAlign_ = 0;
  std::map<std::pair<const Node *, llvm::Value *>, llvm::Value *> values_;
};

// The i32 lane ids 0..W-1.
llvm::Constant *laneIds(llvm::LLVMContext &ctx, int lanes);

} // namespace lanejit::codegen
