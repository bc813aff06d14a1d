/* Hand-written NEON peers (neon_kernels.h), as one would write them for an
 * Apple M1-class core: one pass per reduction with independent accumulators
 * (enough to cover the FP latency at the core's load rate), full vectors
 * everywhere, and tails done with one overlapping or blended vector rather
 * than a scalar loop. No fast-math: every operation is the IEEE one named.
 * Build: cc -O3 -march=armv8.2-a (or -mcpu=neoverse-n1; GCC 12 has no
 * apple-m1) -ffp-contract=off; the fused multiply-adds below are explicit.
 */
#include "neon_kernels.h"

#include <arm_neon.h>

/* Lane i of kLastLanes + n is on iff i >= 4 - n: the last n lanes, n in 0..4.
 * A tail of n < 4 new elements re-reads the row's last full vector and
 * keeps only its last n lanes. */
static const uint32_t kLastLanes[8] = {0, 0, 0, 0, ~0u, ~0u, ~0u, ~0u};

static inline uint32x4_t lastLanes(int64_t n) {
  return vld1q_u32(kLastLanes + n);
}

static inline float32x4_t keepLanes(uint32x4_t mask, float32x4_t v) {
  return vreinterpretq_f32_u32(vandq_u32(mask, vreinterpretq_u32_f32(v)));
}

/* ---- RMSNorm ---------------------------------------------------------- */

/* sum(x[i]^2) over n >= 4 elements. Twelve accumulators: M1 issues three
 * 128-bit loads a cycle and an FMA takes four, so fewer would leave the
 * loop latency-bound. */
static float sumSquares(const float *x, int64_t n) {
  float32x4_t a0 = vdupq_n_f32(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  float32x4_t a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  int64_t c = 0;
  for (; c + 48 <= n; c += 48) {
    float32x4_t v0 = vld1q_f32(x + c), v1 = vld1q_f32(x + c + 4);
    float32x4_t v2 = vld1q_f32(x + c + 8), v3 = vld1q_f32(x + c + 12);
    float32x4_t v4 = vld1q_f32(x + c + 16), v5 = vld1q_f32(x + c + 20);
    float32x4_t v6 = vld1q_f32(x + c + 24), v7 = vld1q_f32(x + c + 28);
    float32x4_t v8 = vld1q_f32(x + c + 32), v9 = vld1q_f32(x + c + 36);
    float32x4_t v10 = vld1q_f32(x + c + 40), v11 = vld1q_f32(x + c + 44);
    a0 = vfmaq_f32(a0, v0, v0);
    a1 = vfmaq_f32(a1, v1, v1);
    a2 = vfmaq_f32(a2, v2, v2);
    a3 = vfmaq_f32(a3, v3, v3);
    a4 = vfmaq_f32(a4, v4, v4);
    a5 = vfmaq_f32(a5, v5, v5);
    a6 = vfmaq_f32(a6, v6, v6);
    a7 = vfmaq_f32(a7, v7, v7);
    a8 = vfmaq_f32(a8, v8, v8);
    a9 = vfmaq_f32(a9, v9, v9);
    a10 = vfmaq_f32(a10, v10, v10);
    a11 = vfmaq_f32(a11, v11, v11);
  }
  /* Leftover vectors (up to eleven) rotate over four accumulators. */
  for (; c + 16 <= n; c += 16) {
    float32x4_t v0 = vld1q_f32(x + c), v1 = vld1q_f32(x + c + 4);
    float32x4_t v2 = vld1q_f32(x + c + 8), v3 = vld1q_f32(x + c + 12);
    a0 = vfmaq_f32(a0, v0, v0);
    a1 = vfmaq_f32(a1, v1, v1);
    a2 = vfmaq_f32(a2, v2, v2);
    a3 = vfmaq_f32(a3, v3, v3);
  }
  for (; c + 4 <= n; c += 4) {
    float32x4_t v = vld1q_f32(x + c);
    a4 = vfmaq_f32(a4, v, v);
  }
  if (c < n) {
    float32x4_t v = keepLanes(lastLanes(n - c), vld1q_f32(x + n - 4));
    a5 = vfmaq_f32(a5, v, v);
  }
  a0 = vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3));
  a4 = vaddq_f32(vaddq_f32(a4, a5), vaddq_f32(a6, a7));
  a8 = vaddq_f32(vaddq_f32(a8, a9), vaddq_f32(a10, a11));
  return vaddvq_f32(vaddq_f32(vaddq_f32(a0, a4), a8));
}

/* y = (x * inv) * gamma over n >= 4 elements. The last vector overlaps the
 * one before it and stores the same values again (y does not alias x). */
static void scaleRow(const float *x, const float *g, float *y, int64_t n, float32x4_t inv) {
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    float32x4_t v0 = vmulq_f32(vld1q_f32(x + c), inv);
    float32x4_t v1 = vmulq_f32(vld1q_f32(x + c + 4), inv);
    float32x4_t v2 = vmulq_f32(vld1q_f32(x + c + 8), inv);
    float32x4_t v3 = vmulq_f32(vld1q_f32(x + c + 12), inv);
    vst1q_f32(y + c, vmulq_f32(v0, vld1q_f32(g + c)));
    vst1q_f32(y + c + 4, vmulq_f32(v1, vld1q_f32(g + c + 4)));
    vst1q_f32(y + c + 8, vmulq_f32(v2, vld1q_f32(g + c + 8)));
    vst1q_f32(y + c + 12, vmulq_f32(v3, vld1q_f32(g + c + 12)));
  }
  for (; c + 4 <= n; c += 4)
    vst1q_f32(y + c, vmulq_f32(vmulq_f32(vld1q_f32(x + c), inv), vld1q_f32(g + c)));
  if (c < n) {
    c = n - 4;
    vst1q_f32(y + c, vmulq_f32(vmulq_f32(vld1q_f32(x + c), inv), vld1q_f32(g + c)));
  }
}

/* Rows shorter than one vector: through a zero-padded copy (element loops
 * rather than memcpy, so that the traced kernel calls nothing). */
static void rmsnormShort(const float *x, const float *g, float *y, int64_t n) {
  float xs[4] = {0, 0, 0, 0}, gs[4] = {0, 0, 0, 0}, ys[4];
  for (int64_t c = 0; c < n; ++c) {
    xs[c] = x[c];
    gs[c] = g[c];
  }
  float32x4_t v = vld1q_f32(xs);
  float ms = vaddvq_f32(vmulq_f32(v, v)) / (float)n;
  float32x4_t inv = vdupq_n_f32(1.0f / __builtin_sqrtf(ms + 1e-5f));
  vst1q_f32(ys, vmulq_f32(vmulq_f32(v, inv), vld1q_f32(gs)));
  for (int64_t c = 0; c < n; ++c)
    y[c] = ys[c];
}

void neon_rmsnorm(const float *x, const float *gamma, float *y, int64_t cols, int64_t stride,
                  int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float *xr = x + r * stride;
    float *yr = y + r * stride;
    if (cols < 4) {
      rmsnormShort(xr, gamma, yr, cols);
      continue;
    }
    float ms = sumSquares(xr, cols) / (float)cols;
    float32x4_t inv = vdupq_n_f32(1.0f / __builtin_sqrtf(ms + 1e-5f));
    scaleRow(xr, gamma, yr, cols, inv);
  }
}

/* ---- masked softmax --------------------------------------------------- */

/* e^x for x <= 0 or NaN, which is all softmax feeds it (x - max). Cephes'
 * expf polynomial (~1 ulp, as the AVX-512 peer) after x = n ln2 + r with
 * the shifter trick; 2^n built in the exponent field. Below -87.34 2^n is
 * not a normal number, and the result (< 2^-126) is flushed to 0: -inf
 * gives exactly 0, NaN stays NaN. */
static inline float32x4_t expNeg(float32x4_t x) {
  const float32x4_t shifter = vdupq_n_f32(0x1.8p23f);
  float32x4_t z = vfmaq_f32(shifter, x, vdupq_n_f32(0x1.715476p+0f));
  float32x4_t n = vsubq_f32(z, shifter);
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  float32x4_t e = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  /* z's low bits hold n (two's complement); shifted into the exponent. */
  uint32x4_t s = vaddq_u32(vshlq_n_u32(vreinterpretq_u32_f32(z), 23), vdupq_n_u32(0x3f800000));
  float32x4_t y = vmulq_f32(e, vreinterpretq_f32_u32(s));
  uint32x4_t tiny = vcltq_f32(x, vdupq_n_f32(-87.33654f));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(y), tiny));
}

/* max(x[0..n)) for n >= 4; the last vector may overlap (max is idempotent). */
static float rowMax(const float *x, int64_t n) {
  float32x4_t m0 = vld1q_f32(x), m1 = m0, m2 = m0, m3 = m0;
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    m0 = vmaxq_f32(m0, vld1q_f32(x + c));
    m1 = vmaxq_f32(m1, vld1q_f32(x + c + 4));
    m2 = vmaxq_f32(m2, vld1q_f32(x + c + 8));
    m3 = vmaxq_f32(m3, vld1q_f32(x + c + 12));
  }
  for (; c + 4 <= n; c += 4)
    m0 = vmaxq_f32(m0, vld1q_f32(x + c));
  if (c < n)
    m1 = vmaxq_f32(m1, vld1q_f32(x + n - 4));
  return vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
}

/* y = e^(x - m) over n >= 4 elements; returns their sum. The last vector
 * overlaps: it stores the same values again and adds only its new lanes. */
static float expAndSum(const float *x, float *y, int64_t n, float32x4_t m) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = s0, s2 = s0, s3 = s0;
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    float32x4_t e0 = expNeg(vsubq_f32(vld1q_f32(x + c), m));
    float32x4_t e1 = expNeg(vsubq_f32(vld1q_f32(x + c + 4), m));
    float32x4_t e2 = expNeg(vsubq_f32(vld1q_f32(x + c + 8), m));
    float32x4_t e3 = expNeg(vsubq_f32(vld1q_f32(x + c + 12), m));
    vst1q_f32(y + c, e0);
    vst1q_f32(y + c + 4, e1);
    vst1q_f32(y + c + 8, e2);
    vst1q_f32(y + c + 12, e3);
    s0 = vaddq_f32(s0, e0);
    s1 = vaddq_f32(s1, e1);
    s2 = vaddq_f32(s2, e2);
    s3 = vaddq_f32(s3, e3);
  }
  for (; c + 4 <= n; c += 4) {
    float32x4_t e = expNeg(vsubq_f32(vld1q_f32(x + c), m));
    vst1q_f32(y + c, e);
    s0 = vaddq_f32(s0, e);
  }
  if (c < n) {
    float32x4_t e = expNeg(vsubq_f32(vld1q_f32(x + n - 4), m));
    vst1q_f32(y + n - 4, e);
    s1 = vaddq_f32(s1, keepLanes(lastLanes(n - c), e));
  }
  return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
}

/* y *= inv over n >= 4 elements; the overlapping last vector scales only
 * its new lanes. */
static void scaleInPlace(float *y, int64_t n, float32x4_t inv) {
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    vst1q_f32(y + c, vmulq_f32(vld1q_f32(y + c), inv));
    vst1q_f32(y + c + 4, vmulq_f32(vld1q_f32(y + c + 4), inv));
    vst1q_f32(y + c + 8, vmulq_f32(vld1q_f32(y + c + 8), inv));
    vst1q_f32(y + c + 12, vmulq_f32(vld1q_f32(y + c + 12), inv));
  }
  for (; c + 4 <= n; c += 4)
    vst1q_f32(y + c, vmulq_f32(vld1q_f32(y + c), inv));
  if (c < n) {
    float32x4_t v = vld1q_f32(y + n - 4);
    vst1q_f32(y + n - 4, vbslq_f32(lastLanes(n - c), vmulq_f32(v, inv), v));
  }
}

/* y[begin..cols) = 0; y[..begin) is final already, so a partial last
 * vector blends zeros into the lanes at and after `begin`. */
static void zeroTail(float *y, int64_t begin, int64_t cols) {
  const float32x4_t zero = vdupq_n_f32(0);
  int64_t n = cols - begin;
  if (n >= 4) {
    float *z = y + begin;
    int64_t c = 0;
    for (; c + 16 <= n; c += 16) {
      vst1q_f32(z + c, zero);
      vst1q_f32(z + c + 4, zero);
      vst1q_f32(z + c + 8, zero);
      vst1q_f32(z + c + 12, zero);
    }
    for (; c + 4 <= n; c += 4)
      vst1q_f32(z + c, zero);
    if (c < n)
      vst1q_f32(z + n - 4, zero);
  } else if (n > 0 && cols >= 4) {
    float32x4_t v = vld1q_f32(y + cols - 4);
    vst1q_f32(y + cols - 4, vbslq_f32(lastLanes(n), zero, v));
  } else {
    for (int64_t c = begin; c < cols; ++c)
      y[c] = 0.0f;
  }
}

/* Fewer than four valid columns: the whole row's softmax in one vector
 * padded with -inf (e^-inf is an exact 0, so the padding adds nothing). */
static void softmaxShort(const float *x, float *y, int64_t valid) {
  float xs[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};
  float ys[4];
  for (int64_t c = 0; c < valid; ++c)
    xs[c] = x[c];
  float32x4_t v = vld1q_f32(xs);
  float32x4_t e = expNeg(vsubq_f32(v, vdupq_n_f32(vmaxvq_f32(v))));
  vst1q_f32(ys, vmulq_f32(e, vdupq_n_f32(1.0f / vaddvq_f32(e))));
  for (int64_t c = 0; c < valid; ++c)
    y[c] = ys[c];
}

void neon_masked_softmax(const float *x, float *y, int64_t cols, int64_t stride,
                         int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float *xr = x + r * stride;
    float *yr = y + r * stride;
    int64_t valid = r % cols + 1; /* columns [0, valid) take part */
    if (valid < 4) {
      softmaxShort(xr, yr, valid);
    } else {
      float32x4_t m = vdupq_n_f32(rowMax(xr, valid));
      float s = expAndSum(xr, yr, valid, m);
      scaleInPlace(yr, valid, vdupq_n_f32(1.0f / s));
    }
    zeroTail(yr, valid, cols);
  }
}
