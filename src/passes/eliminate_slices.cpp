#include "passes/eliminate_slices.h"

#include "passes/pass.h"

#include <map>
#include <unordered_map>

namespace lanejit::passes {
namespace {

// Rebuilds `e` restricted to columns [begin, begin+len) of its own range.
class SlicePusher {
public:
  Expr apply(const Expr &e, const Dim &begin, const Dim &len) {
    if (!e->len)
      return e; // row-uniform: the same for every column
    auto key = std::make_pair(e.get(), std::make_pair(begin.str(), len.str()));
    if (auto it = memo_.find(key); it != memo_.end())
      return it->second;
    Expr result = build(e, begin, len);
    memo_.emplace(key, result);
    return result;
  }

private:
  Expr build(const Expr &e, const Dim &begin, const Dim &len) {
    switch (e->kind) {
    case NodeKind::Load: {
      Node n = *e;
      return relocate(n, e->begin + begin, len);
    }
    case NodeKind::ColIndex:
      return ir::colIndex(e->begin + begin, len);
    case NodeKind::Slice:
      return apply(e->args[0], e->begin + begin, len);
    case NodeKind::Group:
    case NodeKind::Repeat:
      // Their columns are not their operand's columns: the slice stays.
      return ir::slice(e, begin, len);
    default: {
      std::vector<Expr> args;
      for (const Expr &a : e->args)
        args.push_back(apply(a, begin, len));
      return ir::withArgs(*e, std::move(args));
    }
    }
  }

  static Expr relocate(const Node &load, const Dim &begin, const Dim &len) {
    Param decl;
    decl.kind = ParamKind::RowTensor;
    decl.type = load.type;
    return ir::load(load.param, decl, begin, len);
  }

  std::map<std::pair<const Node *, std::pair<std::string, std::string>>, Expr> memo_;
};

} // namespace

Program eliminateSlices(const Program &program) {
  SlicePusher pusher;
  return rewriteProgram(program, [&](const Expr &original, std::vector<Expr> args) {
    if (original->kind == NodeKind::Slice)
      return pusher.apply(args[0], original->begin, *original->len);
    if (args.empty())
      return original;
    return ir::withArgs(*original, std::move(args));
  });
}

} // namespace lanejit::passes
