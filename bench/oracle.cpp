// The per-case oracle (bench/oracle.h).
#include "oracle.h"

#include "peers/peer.h"

#include <lanejit/element_types.h>
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
  stored_.resize(refs_.size());
  for (size_t o = 0; o < refs_.size(); ++o) {
    if (c.outputs[o].type() != DType::I8)
      continue;
    const ReferenceOutput &ref = refs_[o];
    stored_[o].resize(static_cast<size_t>(ref.rows * ref.cols));
    for (int64_t r = 0; r < ref.rows; ++r)
      for (int64_t col = 0; col < ref.cols; ++col)
        stored_[o][r * ref.cols + col] = roundToI8(static_cast<float>(ref.at(r, col)));
  }
}

// check::agrees's i8 rule, |y - roundToI8(want)| <= 1, with the oracle's
// values stored once per case: a large case's q is checked every visit.
void Oracle::compareI8(const check::Case &c, size_t o, OracleCheck &result) const {
  const ReferenceOutput &ref = refs_[o];
  const check::GuardedBuffer &out = c.outputs[o];
  const auto *values = static_cast<const int8_t *>(out.raw());
  for (int64_t r = 0; r < ref.rows; ++r) {
    const int8_t *row = values + r * out.rowStride();
    const int8_t *want_row = stored_[o].data() + r * ref.cols;
    for (int64_t col = 0; col < ref.cols; ++col) {
      int got = row[col];
      double want = ref.at(r, col);
      if (std::isfinite(want))
        result.max_abs_error = std::max(result.max_abs_error, std::abs(got - want));
      if (std::abs(got - want_row[col]) <= 1)
        continue;
      if (result.failures++ == 0)
        result.first_failure = fmt::format("{}[{},{}]: got {}, want {} (stored {})",
                                           c.program.outputs[o].name, r, col, got, want,
                                           want_row[col]);
    }
  }
}

OracleCheck Oracle::compare(const check::Case &c, bool peer) const {
  OracleCheck result;
  // A quantizing program's (one with an i8 output) 16-bit outputs, Q8_0's
  // f16 scales, are computed in f32 and rounded once by every peer too.
  bool quantizing = false;
  for (const check::GuardedBuffer &out : c.outputs)
    quantizing = quantizing || out.type() == DType::I8;
  for (size_t o = 0; o < refs_.size(); ++o) {
    const ReferenceOutput &ref = refs_[o];
    const check::GuardedBuffer &out = c.outputs[o];
    if (out.type() == DType::I8) {
      compareI8(c, o, result);
      continue;
    }
    for (int64_t r = 0; r < ref.rows; ++r) {
      for (int64_t col = 0; col < ref.cols; ++col) {
        float got = out.get(r, col);
        double want = ref.at(r, col);
        bool ok = check::agrees(got, want, out.type());
        // A peer's 16-bit output: eager rounds every intermediate. i8 and
        // f32 outputs (rmsnorm_q8's q and scale) and a quantizing
        // program's f16 scales (rmsnorm_q8_0's) have no such allowance.
        bool half = out.type() == DType::BF16 || out.type() == DType::F16;
        if (peer && half && !quantizing && !ok) {
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
