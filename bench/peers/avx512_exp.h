// bench/peers/avx512_exp.h — the hand-written kernels' exp, shared by
// avx512_kernels.cpp and avx512_rows_kernels.cpp. Include only from files
// compiled with -mavx512f (bench/peers/CMakeLists.txt); `static`, so no
// copy of it can be linked into code built without AVX-512.
#pragma once

#include <immintrin.h>

namespace lanejit::bench::avx512 {

// exp(x): x = n*ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r
// (Cephes expf coefficients, ~1 ulp), then scalef by 2^n, which overflows to
// inf and underflows to 0 by itself. NaN passes through the clamps.
static inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 e = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(e, n);
}

} // namespace lanejit::bench::avx512
