#include "passes/pass.h"

#include <unordered_map>

namespace lanejit::passes {

Program rewriteProgram(const Program &program,
                       const std::function<Expr(const Expr &, std::vector<Expr>)> &rewrite) {
  std::unordered_map<const Node *, Expr> done;
  forEachNode(program, [&](const Expr &e) {
    std::vector<Expr> args;
    args.reserve(e->args.size());
    for (const Expr &a : e->args)
      args.push_back(done.at(a.get()));
    done.emplace(e.get(), rewrite(e, std::move(args)));
  });
  Program out = program;
  for (Write &w : out.writes)
    w.value = done.at(w.value.get());
  return out;
}

} // namespace lanejit::passes
