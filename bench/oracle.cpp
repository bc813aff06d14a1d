// The per-case oracle (bench/oracle.h).
#include "oracle.h"

#include "peers/peer.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <cmath>

namespace lanejit::bench {


Oracle::Oracle(const check::Case &c) {
  std::vector<BufferRef> inputs = c.inputRefs();
  refs_ = evaluateReference(c.program, inputs, c.shape);
  if (refs_.size() != c.outputs.size())
    throw Error(Error::Kind::Bind, fmt::format("oracle gave {} outputs, the case has {}",
                                               refs_.size(), c.outputs.size()));
}

OracleCheck Oracle::compare(const check::Case &c, bool peer) const {
  OracleCheck result;
  for (size_t o = 0; o < refs_.size(); ++o) {
    const ReferenceOutput &ref = refs_[o];
    const check::GuardedBuffer &out = c.outputs[o];
    for (int64_t r = 0; r < ref.rows; ++r) {
      for (int64_t col = 0; col < ref.cols; ++col) {
        float got = out.get(r, col);
        double want = ref.at(r, col);
        bool ok = check::agrees(got, want, out.type());
        if (peer && out.type() != DType::F32 && !ok) {
          double t = peerTolerance(std::string(name(out.type())));
          ok = std::isfinite(got) && std::isfinite(want) &&
               std::abs(got - want) <= t + t * std::abs(want);
        }
        if (std::isfinite(got) && std::isfinite(want))
          result.max_abs_error = std::max(result.max_abs_error, std::abs(got - want));
        if (ok)
          continue;
        if (result.failures++ == 0)
          result.first_failure = fmt::format("{}[{},{}]: got {}, want {}",
                                             c.program.outputs[o].name, r, col, got, want);
      }
    }
  }
  return result;
}

} // namespace lanejit::bench
