// Hand-written AVX-512 kernels (see avx512_kernels.h). Compiled with
// -mavx512f -mavx512vl -mavx512dq -mfma, this file only.
#include "peers/avx512_kernels.h"

#include "peers/avx512_exp.h"

#include <immintrin.h>

namespace lanejit::bench::avx512 {
namespace {

constexpr int64_t W = 16;

// Lanes [0, n) on, for the tail packet (0 < n < 16).
inline __mmask16 firstLanes(int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// tanh(z) = 1 - 2/(exp(2z) + 1): saturates to +-1 through exp's inf and 0.
inline __m512 tanh16(__m512 z) {
  __m512 e = exp16(_mm512_add_ps(z, z));
  __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
}

inline __m512 silu16(__m512 x) {
  __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

inline __m512 gelu16(__m512 x) {
  __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  __m512 inner = _mm512_mul_ps(_mm512_set1_ps(0.7978845608f),
                               _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
  __m512 half_x = _mm512_mul_ps(_mm512_set1_ps(0.5f), x);
  return _mm512_fmadd_ps(half_x, tanh16(inner), half_x);
}

// y[i] = f(a[i], b[i]) over n elements, masked tail.
template <typename F>
inline void binaryMap(const float *a, const float *b, float *y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W)
    _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  if (i < n) {
    __mmask16 m = firstLanes(n - i);
    __m512 r = f(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    _mm512_mask_storeu_ps(y + i, m, r);
  }
}

} // namespace

void rope(const float *x, const float *cos, const float *sin, float *y, int64_t rows,
          int64_t cols) {
  int64_t h = cols / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols, *cr = cos + r * h, *sr = sin + r * h;
    float *yr = y + r * cols;
    // Full packets with plain loads and stores, then one masked tail.
    int64_t c = 0;
    for (; c + W <= h; c += W) {
      __m512 lo = _mm512_loadu_ps(xr + c), hi = _mm512_loadu_ps(xr + h + c);
      __m512 co = _mm512_loadu_ps(cr + c), si = _mm512_loadu_ps(sr + c);
      _mm512_storeu_ps(yr + c, _mm512_fmsub_ps(lo, co, _mm512_mul_ps(hi, si)));
      _mm512_storeu_ps(yr + h + c, _mm512_fmadd_ps(lo, si, _mm512_mul_ps(hi, co)));
    }
    if (c < h) {
      __mmask16 m = firstLanes(h - c);
      __m512 lo = _mm512_maskz_loadu_ps(m, xr + c), hi = _mm512_maskz_loadu_ps(m, xr + h + c);
      __m512 co = _mm512_maskz_loadu_ps(m, cr + c), si = _mm512_maskz_loadu_ps(m, sr + c);
      _mm512_mask_storeu_ps(yr + c, m, _mm512_fmsub_ps(lo, co, _mm512_mul_ps(hi, si)));
      _mm512_mask_storeu_ps(yr + h + c, m, _mm512_fmadd_ps(lo, si, _mm512_mul_ps(hi, co)));
    }
  }
}

void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols) {
  int64_t full = cols / W * W;
  __mmask16 tail = firstLanes(cols - full);
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W)
      acc = _mm512_add_ps(acc, _mm512_loadu_ps(xr + c));
    if (tail)
      acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(tail, xr + full));
    __m512 mean = _mm512_set1_ps(_mm512_reduce_add_ps(acc) / static_cast<float>(cols));
    acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W) {
      __m512 d = _mm512_sub_ps(_mm512_loadu_ps(xr + c), mean);
      acc = _mm512_fmadd_ps(d, d, acc);
    }
    if (tail) {
      __m512 d = _mm512_maskz_sub_ps(tail, _mm512_maskz_loadu_ps(tail, xr + full), mean);
      acc = _mm512_fmadd_ps(d, d, acc);
    }
    float var = _mm512_reduce_add_ps(acc) / static_cast<float>(cols);
    __m512 inv = _mm512_set1_ps(1.0f / __builtin_sqrtf(var + 1e-5f));
    for (int64_t c = 0; c < full; c += W) {
      __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(xr + c), mean), inv);
      _mm512_storeu_ps(yr + c,
                       _mm512_fmadd_ps(d, _mm512_loadu_ps(gamma + c), _mm512_loadu_ps(beta + c)));
    }
    if (tail) {
      __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xr + full), mean), inv);
      __m512 g = _mm512_maskz_loadu_ps(tail, gamma + full);
      __m512 b = _mm512_maskz_loadu_ps(tail, beta + full);
      _mm512_mask_storeu_ps(yr + full, tail, _mm512_fmadd_ps(d, g, b));
    }
  }
}

void swiglu(const float *x, const float *u, float *y, int64_t rows, int64_t cols) {
  binaryMap(x, u, y, rows * cols, [](__m512 a, __m512 b) { return _mm512_mul_ps(silu16(a), b); });
}

void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols) {
  int64_t full = cols / W * W;
  __mmask16 tail = firstLanes(cols - full);
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W) {
      __m512 v = _mm512_loadu_ps(xr + c);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    if (tail) {
      __m512 v = _mm512_maskz_loadu_ps(tail, xr + full);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    float ms = _mm512_reduce_add_ps(acc) / static_cast<float>(cols);
    __m512 inv = _mm512_set1_ps(1.0f / __builtin_sqrtf(ms + 1e-5f));
    for (int64_t c = 0; c < full; c += W)
      _mm512_storeu_ps(yr + c, _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(xr + c), inv),
                                             _mm512_loadu_ps(gamma + c)));
    if (tail) {
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, xr + full), inv);
      _mm512_mask_storeu_ps(yr + full, tail,
                            _mm512_mul_ps(v, _mm512_maskz_loadu_ps(tail, gamma + full)));
    }
  }
}

void geluResidual(const float *x, const float *u, float *y, int64_t rows, int64_t cols) {
  binaryMap(x, u, y, rows * cols, [](__m512 a, __m512 b) { return _mm512_add_ps(gelu16(a), b); });
}

void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols) {
  __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    int64_t valid = r % cols + 1; // columns [0, valid) take part; the rest are 0
    int64_t full = valid / W * W;
    __mmask16 tail = firstLanes(valid - full);
    __m512 mx = minus_inf;
    for (int64_t c = 0; c < full; c += W)
      mx = _mm512_max_ps(mx, _mm512_loadu_ps(xr + c));
    if (tail)
      mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(minus_inf, tail, xr + full));
    __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W) {
      __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(xr + c), m));
      _mm512_storeu_ps(yr + c, e);
      acc = _mm512_add_ps(acc, e);
    }
    if (tail) {
      __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xr + full), m));
      _mm512_mask_storeu_ps(yr + full, tail, e);
      acc = _mm512_mask_add_ps(acc, tail, acc, e);
    }
    __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
    for (int64_t c = 0; c < valid; c += W) {
      __mmask16 k = c + W <= valid ? static_cast<__mmask16>(0xFFFF) : firstLanes(valid - c);
      _mm512_mask_storeu_ps(yr + c, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, yr + c), inv));
    }
    for (int64_t c = valid; c < cols; c += W) {
      __mmask16 k = c + W <= cols ? static_cast<__mmask16>(0xFFFF) : firstLanes(cols - c);
      _mm512_mask_storeu_ps(yr + c, k, _mm512_setzero_ps());
    }
  }
}

} // namespace lanejit::bench::avx512
