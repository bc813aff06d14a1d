// Hand-written AVX-512 bf16 kernels (see avx512_bf16_kernels.h). Compiled
// with -mavx512f -mavx512vl -mavx512dq -mavx512bw -mfma, this file only.
#include "peers/avx512_bf16_kernels.h"

#include "peers/avx512_exp.h"

#include <immintrin.h>

namespace lanejit::bench::avx512 {
namespace {

constexpr int64_t W = 16;

inline __mmask16 firstLanes(int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

inline __m512 widen(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}
inline __m512 load(const uint16_t *p) {
  return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}
inline __m512 load(const uint16_t *p, __mmask16 k) {
  return widen(_mm256_maskz_loadu_epi16(k, p));
}

// Nearest-even: add 0x7fff plus the kept part's lowest bit, keep the top
// half (finite inputs: these kernels produce no NaN from finite data).
inline __m256i round(__m512 v) {
  __m512i bits = _mm512_castps_si512(v);
  __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  bits = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16));
}
inline void store(uint16_t *p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), round(v));
}
inline void store(uint16_t *p, __mmask16 k, __m512 v) {
  _mm256_mask_storeu_epi16(p, k, round(v));
}

} // namespace

void rmsNormBF16(const uint16_t *x, const uint16_t *gamma, uint16_t *y, int64_t rows,
                 int64_t cols) {
  int64_t full = cols / W * W;
  __mmask16 tail = firstLanes(cols - full);
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *xr = x + r * cols;
    uint16_t *yr = y + r * cols;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W) {
      __m512 v = load(xr + c);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    if (tail) {
      __m512 v = load(xr + full, tail);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    float ms = _mm512_reduce_add_ps(acc) / static_cast<float>(cols);
    __m512 inv = _mm512_set1_ps(1.0f / __builtin_sqrtf(ms + 1e-5f));
    for (int64_t c = 0; c < full; c += W)
      store(yr + c, _mm512_mul_ps(_mm512_mul_ps(load(xr + c), inv), load(gamma + c)));
    if (tail)
      store(yr + full, tail,
            _mm512_mul_ps(_mm512_mul_ps(load(xr + full, tail), inv), load(gamma + full, tail)));
  }
}

void maskedSoftmaxBF16(const uint16_t *x, uint16_t *y, int64_t rows, int64_t cols) {
  __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *xr = x + r * cols;
    uint16_t *yr = y + r * cols;
    int64_t valid = r % cols + 1; // columns [0, valid) take part; the rest are 0
    int64_t full = valid / W * W;
    __mmask16 tail = firstLanes(valid - full);
    __m512 mx = minus_inf;
    for (int64_t c = 0; c < full; c += W)
      mx = _mm512_max_ps(mx, load(xr + c));
    if (tail)
      mx = _mm512_mask_max_ps(mx, tail, mx, load(xr + full, tail));
    __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += W)
      acc = _mm512_add_ps(acc, exp16(_mm512_sub_ps(load(xr + c), m)));
    if (tail)
      acc = _mm512_mask_add_ps(acc, tail, acc, exp16(_mm512_sub_ps(load(xr + full, tail), m)));
    __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
    for (int64_t c = 0; c < full; c += W)
      store(yr + c, _mm512_mul_ps(exp16(_mm512_sub_ps(load(xr + c), m)), inv));
    if (tail)
      store(yr + full, tail, _mm512_mul_ps(exp16(_mm512_sub_ps(load(xr + full, tail), m)), inv));
    for (int64_t c = valid; c < cols; c += W) {
      __mmask16 k = c + W <= cols ? static_cast<__mmask16>(0xFFFF) : firstLanes(cols - c);
      _mm256_mask_storeu_epi16(yr + c, k, _mm256_setzero_si256());
    }
  }
}

} // namespace lanejit::bench::avx512
