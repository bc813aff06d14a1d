// The lowered form of a row program: which column loops ("traversals") run
// per row, in which order, and which packet bodies each one has.
//
// A traversal visits columns [0, len) of a row in packets of W lanes and
// either accumulates reductions or stores writes (or both). Reductions that
// depend on other reductions need a later traversal; everything with the
// same length and depth shares one (RoPE's two half-writes become one
// traversal of C/2 columns). Full/tail splitting is decided here, so codegen
// only knows two packet kinds: Dense (constant all-on mask) and Masked.
#pragma once

#include "analysis/uniformity.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <vector>

namespace lanejit::lower {

enum class PacketKind { Dense, Masked };

struct Traversal {
  Dim len;                       // columns visited per row
  int depth = 0;                 // 0: reads no reduction; k: needs depth k-1
  std::vector<Expr> reductions;  // Reduce nodes finished by this traversal
  std::vector<int> writes;       // indices into Program::writes
  // Full packets run `full`, the tail (C mod W lanes) runs Masked.
  PacketKind full = PacketKind::Dense;
};

struct KernelPlan {
  Program program; // after the pass pipeline
  analysis::UniformityInfo uniformity;
  std::vector<Traversal> traversals; // per-row execution order
  int lanes = 16;
  // Independent packet accumulators per reduction: lanes * accumulators
  // = kReductionLanes for every W, so the reduction order (and so every
  // output bit) does not depend on W or on any switch.
  int accumulators = 4;
  int block_rows = 32;
};

// Virtual accumulator lanes of every reduction: column c adds into lane
// c mod kReductionLanes; the lanes are combined by a fixed halving tree.
constexpr int kReductionLanes = 64;

KernelPlan planKernel(const Program &program, const CompileOptions &options, int lanes);

} // namespace lanejit::lower
