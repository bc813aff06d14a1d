#include "jit/split_long_blocks.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace lanejit::jit {

size_t splitLongBlocks(llvm::Module &module) {
  size_t cuts = 0;
  for (llvm::Function &fn : module) {
    std::vector<llvm::BasicBlock *> blocks;
    for (llvm::BasicBlock &bb : fn)
      blocks.push_back(&bb);
    for (llvm::BasicBlock *bb : blocks) {
      // Where each piece ends: after kMaxBlockInstructions instructions or
      // kMaxBlockMemoryOps loads, stores and calls, whichever comes first.
      std::vector<llvm::Instruction *> at;
      size_t n = 0, memory = 0;
      for (llvm::Instruction &i : *bb) {
        if (n >= kMaxBlockInstructions || memory >= kMaxBlockMemoryOps) {
          if (i.isTerminator() || llvm::isa<llvm::PHINode>(i))
            break;
          at.push_back(&i);
          n = memory = 0;
        }
        ++n;
        memory += i.mayReadOrWriteMemory();
      }
      // Last cut first, so each split moves only one piece: linear.
      for (auto i = at.rbegin(); i != at.rend(); ++i) {
        llvm::BasicBlock *piece =
            bb->splitBasicBlock((*i)->getIterator(), bb->getName() + ".piece");
        // An address-taken block is never merged back into its predecessor
        // (CodeGenPrepare merges plain fall-through pairs); the constant has
        // no user, so nothing is emitted for it.
        llvm::BlockAddress::get(piece);
        ++cuts;
      }
    }
  }
  return cuts;
}

} // namespace lanejit::jit
