// Building a call's buffers from a Program's declarations, and checking the
// outputs against the FP64 oracle.
#include <lanejit/dim.h>
#include <lanejit/check.h>
#include <lanejit/element_types.h>
#include <lanejit/error.h>
#include <lanejit/reference.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace lanejit::check {
namespace {

// splitmix64: a tiny generator with the same stream on every platform
// (std:: distributions are implementation-defined).
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-2, 2) on a 2^-22 grid, exact in f32.
  float uniform() { return -2.0f + 4.0f * static_cast<float>(next() >> 40) * 0x1p-24f; }

private:
  uint64_t state_;
};

void fillInput(GuardedBuffer &buffer, const Param &param, int index, Fill fill, uint64_t seed) {
  // Padding between rows holds NaN: a kernel that reads it poisons its
  // result instead of passing by luck.
  buffer.fill(std::numeric_limits<float>::quiet_NaN());
  Random random(seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index + 1)));
  for (int64_t r = 0; r < buffer.rows(); ++r) {
    for (int64_t c = 0; c < buffer.cols(); ++c) {
      float value;
      if (fill == Fill::Random)
        value = random.uniform();
      else if (param.kind == ParamKind::Scalar)
        value = 1e-5f;
      else
        value = fixtureValue(param.name, r * buffer.cols() + c); // dense flat index
      // An i8 buffer holds quantized values: spread them over its range.
      buffer.set(r, c, param.type == DType::I8 ? value * 63.5f : value);
    }
  }
}

// The spacing of `type`'s numbers at |x| (0 for f32, whose bound is the
// tolerance alone): one unit in the last place of a bf16 or f16 result.
double lastPlace(DType type, double x) {
  if (type != DType::BF16 && type != DType::F16)
    return 0;
  int digits = type == DType::BF16 ? 8 : 11; // significand bits, the implicit one included
  int minExponent = type == DType::BF16 ? -126 : -14;
  int exponent = x == 0 ? minExponent : std::max(std::ilogb(x), minExponent);
  return std::ldexp(1.0, exponent - (digits - 1));
}

} // namespace

bool agrees(double y, double want, DType type) {
  // i8: one step either side of the oracle's value as stored (a NaN stores
  // 0): computed in f32 and in f64, a value near a half can round apart.
  if (type == DType::I8)
    return std::abs(y - roundToI8(static_cast<float>(want))) <= 1;
  if (std::isnan(y) || std::isnan(want))
    return std::isnan(y) && std::isnan(want);
  if (type == DType::BF16 || type == DType::F16) {
    auto narrow = static_cast<float>(want);
    float rounded =
        type == DType::BF16 ? widenBF16(roundToBF16(narrow)) : widenF16(roundToF16(narrow));
    if (std::isinf(rounded))
      return y == rounded;
  }
  if (std::isinf(y) || std::isinf(want))
    return y == want;
  return std::abs(y - want) <=
         kTolerance + kTolerance * std::abs(want) + lastPlace(type, std::abs(want));
}

std::vector<BufferRef> Case::inputRefs() const {
  std::vector<BufferRef> refs;
  for (const GuardedBuffer &buffer : inputs)
    refs.push_back(buffer.ref());
  return refs;
}

std::vector<BufferRef> Case::outputRefs() const {
  std::vector<BufferRef> refs;
  for (const GuardedBuffer &buffer : outputs)
    refs.push_back(buffer.ref());
  return refs;
}

Case makeCase(const Program &program, Shape shape, Fill fill, uint64_t seed,
              int64_t row_stride_pad) {
  if (shape.rows < 0 || shape.cols < 0 || row_stride_pad < 0)
    throw Error(Error::Kind::Bind, fmt::format("makeCase: bad shape {}x{} (pad {})", shape.rows,
                                               shape.cols, row_stride_pad));
  Case result{program, shape, {}, {}};
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const Param &param = program.inputs[i];
    GuardedBuffer buffer;
    if (param.kind == ParamKind::Scalar) {
      buffer = GuardedBuffer(1, 1, 1, param.type);
    } else {
      int64_t cols = evaluateDim(param.cols, shape.cols, param.name);
      if (param.kind == ParamKind::ColVector)
        buffer = GuardedBuffer(1, cols, cols, param.type);
      else
        buffer = GuardedBuffer(shape.rows, cols, cols + row_stride_pad, param.type);
    }
    fillInput(buffer, param, static_cast<int>(i), fill, seed);
    result.inputs.push_back(std::move(buffer));
  }
  for (const Output &output : program.outputs) {
    int64_t cols = evaluateDim(output.cols, shape.cols, output.name);
    GuardedBuffer buffer(shape.rows, cols, cols + row_stride_pad, output.type);
    buffer.fill(std::numeric_limits<float>::quiet_NaN());
    // i8 has no NaN; -128 is a value no write stores (roundToI8).
    if (output.type == DType::I8)
      std::memset(buffer.raw(), 0x80, static_cast<size_t>(buffer.bytes()));
    result.outputs.push_back(std::move(buffer));
  }
  return result;
}

Comparison compareWithReference(const Case &c) {
  std::vector<BufferRef> inputs = c.inputRefs();
  std::vector<ReferenceOutput> refs = evaluateReference(c.program, inputs, c.shape);
  if (refs.size() != c.outputs.size())
    throw Error(Error::Kind::Bind,
                fmt::format("compareWithReference: oracle gave {} outputs, case has {}",
                            refs.size(), c.outputs.size()));
  Comparison result;
  for (size_t o = 0; o < refs.size(); ++o) {
    const ReferenceOutput &ref = refs[o];
    const GuardedBuffer &out = c.outputs[o];
    const std::string &name = c.program.outputs[o].name;
    if (ref.rows != out.rows() || ref.cols != out.cols())
      throw Error(Error::Kind::Bind,
                  fmt::format("compareWithReference: output '{}' is {}x{}, oracle gives {}x{}",
                              name, out.rows(), out.cols(), ref.rows, ref.cols));
    for (int64_t r = 0; r < ref.rows; ++r) {
      for (int64_t col = 0; col < ref.cols; ++col) {
        float got = out.get(r, col);
        double y = got, want = ref.at(r, col);
        ++result.checked;
        bool ok = agrees(y, want, out.type());
        if (std::isfinite(y) && std::isfinite(want)) {
          double error = std::abs(y - want);
          result.max_abs_error = std::max(result.max_abs_error, error);
          if (want != 0)
            result.max_rel_error = std::max(result.max_rel_error, error / std::abs(want));
        } else if (!ok) {
          result.max_abs_error = std::numeric_limits<double>::infinity();
          result.max_rel_error = std::numeric_limits<double>::infinity();
        }
        if (ok)
          continue;
        if (result.failures++ == 0)
          result.first_failure = fmt::format("{}[{},{}]: got {}, want {}", name, r, col, got, want);
      }
    }
  }
  return result;
}

} // namespace lanejit::check
