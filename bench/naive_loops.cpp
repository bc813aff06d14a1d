// Plain loops, deliberately unoptimised beyond what the compiler does at
// -O3 -march=native: they stand for "a programmer wrote the formula".
#include "naive_loops.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lanejit::bench {
namespace naive {

void rope(const float *x, const float *cos, const float *sin, float *y, int64_t rows,
          int64_t cols) {
  int64_t h = cols / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    const float *cr = cos + r * h;
    const float *sr = sin + r * h;
    float *yr = y + r * cols;
    for (int64_t c = 0; c < h; ++c) {
      yr[c] = xr[c] * cr[c] - xr[c + h] * sr[c];
      yr[c + h] = xr[c] * sr[c] + xr[c + h] * cr[c];
    }
  }
}

void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += xr[c];
    float mean = sum / cols;
    float sq = 0;
    for (int64_t c = 0; c < cols; ++c)
      sq += (xr[c] - mean) * (xr[c] - mean);
    float var = sq / cols;
    float denom = std::sqrt(var + 1e-5f);
    for (int64_t c = 0; c < cols; ++c)
      yr[c] = (xr[c] - mean) / denom * gamma[c] + beta[c];
  }
}

void swiglu(const float *x, const float *u, float *y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    y[i] = x[i] / (1.0f + std::exp(-x[i])) * u[i];
}

void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float sq = 0;
    for (int64_t c = 0; c < cols; ++c)
      sq += xr[c] * xr[c];
    float denom = std::sqrt(sq / cols + 1e-5f);
    for (int64_t c = 0; c < cols; ++c)
      yr[c] = xr[c] / denom * gamma[c];
  }
}

void geluResidual(const float *x, const float *u, float *y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))) + u[i];
  }
}

void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    if (cols == 0)
      return;
    int64_t last = r % cols; // columns 0..last are valid
    float m = xr[0];
    for (int64_t c = 1; c <= last; ++c)
      m = std::max(m, xr[c]);
    float sum = 0;
    for (int64_t c = 0; c <= last; ++c) {
      yr[c] = std::exp(xr[c] - m);
      sum += yr[c];
    }
    for (int64_t c = 0; c <= last; ++c)
      yr[c] = yr[c] / sum;
    for (int64_t c = last + 1; c < cols; ++c)
      yr[c] = 0;
  }
}

void rmsNormQ8(const float *x, const float *gamma, int8_t *q, float *scale, int64_t rows,
               int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    int8_t *qr = q + r * cols;
    float sq = 0;
    for (int64_t c = 0; c < cols; ++c)
      sq += xr[c] * xr[c];
    float denom = std::sqrt(sq / cols + 1e-5f);
    float amax = 0;
    for (int64_t c = 0; c < cols; ++c)
      amax = std::max(amax, std::fabs(xr[c] / denom * gamma[c]));
    scale[r] = amax / 127;
    float inv = amax == 0 ? 0 : 127 / amax;
    for (int64_t c = 0; c < cols; ++c) {
      float v = std::nearbyint(xr[c] / denom * gamma[c] * inv); // ties to even
      qr[c] = std::isnan(v) ? 0 : static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
}

void rmsNormQ8_0(const float *x, const float *gamma, int8_t *q, uint16_t *scale, int64_t rows,
                 int64_t cols) {
  const int64_t blocks = cols / 32;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    int8_t *qr = q + r * cols;
    float sq = 0;
    for (int64_t c = 0; c < cols; ++c)
      sq += xr[c] * xr[c];
    float denom = std::sqrt(sq / cols + 1e-5f);
    for (int64_t b = 0; b < blocks; ++b) {
      float amax = 0;
      for (int64_t c = b * 32; c < b * 32 + 32; ++c)
        amax = std::max(amax, std::fabs(xr[c] / denom * gamma[c]));
      // The compiler's own float -> half conversion (nearest-even).
      scale[r * blocks + b] = std::bit_cast<uint16_t>(static_cast<_Float16>(amax / 127));
      float inv = amax == 0 ? 0 : 127 / amax;
      for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
        float v = std::nearbyint(xr[c] / denom * gamma[c] * inv); // ties to even
        qr[c] = std::isnan(v) ? 0 : static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
      }
    }
  }
}

} // namespace naive

namespace {

void ropeAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::rope(in[0], in[1], in[2], static_cast<float *>(out[0]), rows, cols);
}
void layerNormAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::layerNorm(in[0], in[1], in[2], static_cast<float *>(out[0]), rows, cols);
}
void swigluAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::swiglu(in[0], in[1], static_cast<float *>(out[0]), rows, cols);
}
void rmsNormAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::rmsNorm(in[0], in[1], static_cast<float *>(out[0]), rows, cols);
}
void geluResidualAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::geluResidual(in[0], in[1], static_cast<float *>(out[0]), rows, cols);
}
void maskedSoftmaxAdapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::maskedSoftmax(in[0], static_cast<float *>(out[0]), rows, cols);
}
void rmsNormQ8Adapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::rmsNormQ8(in[0], in[1], static_cast<int8_t *>(out[0]), static_cast<float *>(out[1]),
                   rows, cols);
}
void rmsNormQ8_0Adapter(const float *const *in, void *const *out, int64_t rows, int64_t cols) {
  naive::rmsNormQ8_0(in[0], in[1], static_cast<int8_t *>(out[0]),
                     static_cast<uint16_t *>(out[1]), rows, cols);
}

} // namespace

const NaiveOp *naiveOp(std::string_view name) {
  static const std::vector<NaiveOp> ops = {
      {"rope", {"x", "cos", "sin"}, ropeAdapter},
      {"layernorm", {"x", "gamma", "beta"}, layerNormAdapter},
      {"swiglu", {"x", "u"}, swigluAdapter},
      {"rmsnorm", {"x", "gamma"}, rmsNormAdapter},
      {"gelu_residual", {"x", "u"}, geluResidualAdapter},
      {"masked_softmax", {"x"}, maskedSoftmaxAdapter},
      {"rmsnorm_q8", {"x", "gamma"}, rmsNormQ8Adapter},
      {"rmsnorm_q8_0", {"x", "gamma"}, rmsNormQ8_0Adapter},
  };
  for (const NaiveOp &op : ops)
    if (op.name == name)
      return &op;
  return nullptr;
}

} // namespace lanejit::bench
