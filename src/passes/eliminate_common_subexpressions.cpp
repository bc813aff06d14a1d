#include "passes/eliminate_common_subexpressions.h"

#include "passes/pass.h"

#include <unordered_map>

namespace lanejit::passes {

Program eliminateCommonSubexpressions(const Program &program) {
  // Bucket by structural hash; equal hashes are confirmed structurally.
  std::unordered_multimap<uint64_t, Expr> seen;
  return rewriteProgram(program, [&](const Expr &original, std::vector<Expr> args) {
    Expr candidate = args.empty() ? original : ir::withArgs(*original, std::move(args));
    auto [first, last] = seen.equal_range(candidate->hash);
    for (auto it = first; it != last; ++it)
      if (ir::structurallyEqual(it->second, candidate))
        return it->second;
    seen.emplace(candidate->hash, candidate);
    return candidate;
  });
}

} // namespace lanejit::passes
