#include "analysis/uniformity.h"

#include <algorithm>

namespace lanejit::analysis {

UniformityInfo analyzeUniformity(const Program &program) {
  UniformityInfo info;
  forEachNode(program, [&](const Expr &e) {
    Uniformity u = Uniformity::Launch;
    switch (e->kind) {
    case NodeKind::Const:
    case NodeKind::DimValue:
      break;
    case NodeKind::Load:
      u = e->len ? Uniformity::Lane : Uniformity::Launch;
      break;
    case NodeKind::ColIndex:
      u = Uniformity::Lane;
      break;
    case NodeKind::RowIndex:
    case NodeKind::Reduce: // a whole row collapses into one value
      u = Uniformity::Row;
      break;
    default:
      for (const Expr &a : e->args)
        u = std::max(u, info.of(a));
      break;
    }
    info.set(e.get(), u);
  });
  return info;
}

} // namespace lanejit::analysis
