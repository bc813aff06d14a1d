// Hand-written AVX-512 kernels for narrow rows, rows across lanes (see
// avx512_rows_kernels.h). Compiled with -mavx512f -mavx512vl -mavx512dq
// -mfma, this file only.
//
// How a block's rows reach the lanes was measured: RMSNorm, ns per row,
// one thread, Zen 4, 65536 rows (C <= 8) or 262144 / C rows, median of 9
// (a scratch harness calling these functions; the statistics pass differs,
// the output pass is the same row-layout one):
//   C                        1     3     5     8    12    16
//   transpose-reduce      0.26  0.54  1.91  0.74  1.84  1.70
//   gathers (1 per col)   0.42  2.35  4.34  3.98  14.0  7.08
//   scalar-stride loads   0.30  3.12  4.75  1.58  14.7  3.44
//   row-wise avx512 peer  3.99  3.93  3.87  3.89  3.75  3.76
// so the transpose-reduce (reduceRows) is kept. Scatters for the stores
// were not tried: the row layout the loads keep needs none. 16 < C <= 64
// (row-wise -> across lanes): RMSNorm C = 24 4.20 -> 4.11, 32 5.01 -> 4.95,
// 48 5.41 -> 5.47, 64 8.55 -> 6.93; LayerNorm 64 15.0 -> 10.1; masked
// softmax 64 20.2 -> 19.2 (memory-bound from C ~ 24 at these sizes; the
// softmax's exp dominates: 64 gave 17.9 -> 21.2 in another run). Past 64
// columns the row-wise kernels run, as the narrow-row bar this peer is:
// the norms would still gain (C = 128: RMSNorm 14.6 -> 11.4, LayerNorm
// 24.1 -> 16.7) but the softmax would not (26.9 -> 28.4, 27.5 -> 37.0).
#include "peers/avx512_rows_kernels.h"

#include "peers/avx512_exp.h"
#include "peers/avx512_kernels.h"

#include <immintrin.h>

namespace lanejit::bench::avx512_rows {
namespace {

using avx512::exp16;

constexpr int W = 16;

// Lanes [0, n) on, n clamped to [0, 16].
inline __mmask16 firstLanes(int64_t n) {
  if (n >= W)
    return static_cast<__mmask16>(0xFFFF);
  return n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1u);
}

inline __m512i iota() {
  return _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

// 1/sqrt(s/cols + 1e-5) for 16 rows at once: one vector divide and sqrt.
inline __m512 invRootMean(__m512 s, __m512 cols) {
  __m512 mean = _mm512_div_ps(s, cols);
  return _mm512_div_ps(_mm512_set1_ps(1.0f),
                       _mm512_sqrt_ps(_mm512_add_ps(mean, _mm512_set1_ps(1e-5f))));
}

struct Add {
  __m512 operator()(__m512 a, __m512 b) const { return _mm512_add_ps(a, b); }
};
struct Max {
  __m512 operator()(__m512 a, __m512 b) const { return _mm512_max_ps(a, b); }
};

// v[0..N), N a power of two, hold 16 rows in order, N lanes per row: one
// step combines packets 2i and 2i+1 (their even and odd 128-bit blocks while
// a row spans 8 or 16 lanes, then their even and odd lanes within blocks),
// halving the lanes per row, until v[0] holds one lane per row, row r at
// lane laneOfRow(N, r). In-block and block shuffles, not two-source
// permutes (vpermt2ps): RMSNorm 65536x8 1.24 -> 0.74 ns/row. Overwrites v.
template <int N, typename Op> [[gnu::always_inline]] inline __m512 reduceRows(__m512 *v, Op op) {
  static_assert(N >= 1 && N <= W && (N & (N - 1)) == 0);
#pragma GCC unroll 16
  for (int n = N; n > 1; n /= 2)
#pragma GCC unroll 16
    for (int i = 0; i < n / 2; ++i) {
      __m512 a = v[2 * i], b = v[2 * i + 1];
      v[i] = n >= 8 ? op(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD))
                    : op(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xDD));
    }
  return v[0];
}

// Where reduceRows<N> leaves row r (traced through its shuffles).
constexpr int laneOfRow(int n, int r) {
  if (n == 1)
    return r;
  if (n == 2)
    return r % 2 + 4 * (r / 2 % 4) + 2 * (r / 8);
  return 4 * (r % 4) + r / 4;
}

// The lanes of reduceRows<N>'s result put back in row order.
template <int N> inline __m512 inRowOrder(__m512 v) {
  alignas(64) int idx[W];
  for (int r = 0; r < W; ++r)
    idx[r] = laneOfRow(N, r);
  return _mm512_permutexvar_ps(_mm512_load_si512(idx), v);
}

// C <= 16: a block's row r sits at lanes [(r % G) * P, +P) of packet r / G,
// P = the next power of two >= C, G = 16 / P rows per packet, P packets;
// lanes past C in a row are padding (0). Dense: C == P, every lane a column,
// plain loads and stores; one row per packet (P = 16): masked loads and
// stores; else expand loads and compress + stores read and write exactly
// the rows' C floats.
template <int P, bool Dense> struct Narrow {
  static constexpr int G = W / P;
  int64_t cols;
  __mmask16 pad = 0; // lanes j with j % P < C
  __m512 cols_f;
  // Lane j of packet k -> the lane of reduceRows<P>'s result holding the
  // block row packet k has there (k * G + j / P).
  __m512i from[P];

  explicit Narrow(int64_t c) : cols(c), cols_f(_mm512_set1_ps(static_cast<float>(c))) {
    for (int j = 0; j < W; ++j)
      if ((j % P) < c)
        pad = static_cast<__mmask16>(pad | (1u << j));
    for (int k = 0; k < P; ++k) {
      alignas(64) int idx[W];
      for (int j = 0; j < W; ++j)
        idx[j] = laneOfRow(P, k * G + j / P);
      from[k] = _mm512_load_si512(idx);
    }
  }
  // Packet k's lanes holding columns of the block's first n rows.
  __mmask16 lanes(int k, int n) const {
    __mmask16 rows = firstLanes((static_cast<int64_t>(n) - k * G) * P);
    return Dense ? rows : static_cast<__mmask16>(rows & pad);
  }
  int64_t offset(int k) const { return k * G * cols; }
  // A [C] vector laid out like one packet: lane j -> v[j % P], 0 on padding.
  __m512 tile(const float *v) const {
    __m512 row = _mm512_maskz_loadu_ps(firstLanes(cols), v);
    return _mm512_permutexvar_ps(_mm512_and_si512(iota(), _mm512_set1_epi32(P - 1)), row);
  }
  __m512 load(__mmask16 m, const float *p) const {
    // (With G == 1 the lanes are a prefix: an expand load is a masked load.)
    return Dense || G == 1 ? _mm512_maskz_loadu_ps(m, p) : _mm512_maskz_expandloadu_ps(m, p);
  }
  // Register compress then a plain masked store: Zen 4 microcodes the
  // compress-to-memory form.
  void store(float *p, __mmask16 m, __m512 v) const {
    if (Dense || G == 1)
      _mm512_mask_storeu_ps(p, m, v);
    else
      _mm512_mask_storeu_ps(p, firstLanes(__builtin_popcount(m)), _mm512_maskz_compress_ps(m, v));
  }
};

// 16 < C <= 64: a row is K = ceil(C/16) packets (the last masked); the
// block's rows are reduced within their packets first, then across rows.
template <int K> struct Wide {
  int64_t cols;
  __mmask16 tail; // the last packet's columns
  __m512 cols_f;

  explicit Wide(int64_t c)
      : cols(c), tail(firstLanes(c - (K - 1) * W)), cols_f(_mm512_set1_ps(static_cast<float>(c))) {}
  __mmask16 mask(int j) const { return j < K - 1 ? static_cast<__mmask16>(0xFFFF) : tail; }
};

// Runs block(x, y, n) over the rows in blocks of 16, the last one n < 16.
template <typename Block>
[[gnu::always_inline]] inline void eachBlock(const float *x, float *y, int64_t rows, int64_t cols,
                                             Block block) {
  int64_t full = rows / W * W;
  for (int64_t r = 0; r < full; r += W)
    block(x + r * cols, y + r * cols, W);
  if (full < rows)
    block(x + full * cols, y + full * cols, static_cast<int>(rows - full));
}

struct RmsNorm {
  template <int P, bool Dense>
  static void narrow(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols) {
    const Narrow<P, Dense> s(cols);
    const __m512 g = s.tile(gamma);
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      __m512 v[P], q[P];
      for (int k = 0; k < P; ++k) {
        v[k] = s.load(s.lanes(k, n), xb + s.offset(k));
        q[k] = _mm512_mul_ps(v[k], v[k]);
      }
      __m512 inv = invRootMean(reduceRows<P>(q, Add()), s.cols_f);
      for (int k = 0; k < P; ++k) {
        __m512 scaled = _mm512_mul_ps(v[k], _mm512_permutexvar_ps(s.from[k], inv));
        s.store(yb + s.offset(k), s.lanes(k, n), _mm512_mul_ps(scaled, g));
      }
    });
  }

  template <int K>
  static void wide(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols) {
    const Wide<K> s(cols);
    __m512 g[K];
    for (int j = 0; j < K; ++j)
      g[j] = _mm512_maskz_loadu_ps(s.mask(j), gamma + j * W);
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      __m512 q[W];
      for (int r = 0; r < W; ++r) {
        q[r] = _mm512_setzero_ps();
        if (r < n)
          for (int j = 0; j < K; ++j) {
            __m512 v = _mm512_maskz_loadu_ps(s.mask(j), xb + r * cols + j * W);
            q[r] = _mm512_fmadd_ps(v, v, q[r]);
          }
      }
      alignas(64) float inv[W];
      _mm512_store_ps(inv, invRootMean(inRowOrder<W>(reduceRows<W>(q, Add())), s.cols_f));
      for (int r = 0; r < n; ++r) {
        __m512 b = _mm512_set1_ps(inv[r]);
        for (int j = 0; j < K; ++j) {
          __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(s.mask(j), xb + r * cols + j * W), b);
          _mm512_mask_storeu_ps(yb + r * cols + j * W, s.mask(j), _mm512_mul_ps(v, g[j]));
        }
      }
    });
  }
};

struct LayerNorm {
  template <int P, bool Dense>
  static void narrow(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
                     int64_t cols) {
    const Narrow<P, Dense> s(cols);
    const __m512 g = s.tile(gamma), b = s.tile(beta);
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      __m512 d[P], t[P];
      for (int k = 0; k < P; ++k)
        t[k] = d[k] = s.load(s.lanes(k, n), xb + s.offset(k));
      __m512 mean = _mm512_div_ps(reduceRows<P>(t, Add()), s.cols_f);
      for (int k = 0; k < P; ++k) {
        // Padding must stay 0 in d: it is summed squared below.
        d[k] = _mm512_maskz_sub_ps(s.lanes(k, n), d[k], _mm512_permutexvar_ps(s.from[k], mean));
        t[k] = _mm512_mul_ps(d[k], d[k]);
      }
      __m512 inv = invRootMean(reduceRows<P>(t, Add()), s.cols_f);
      for (int k = 0; k < P; ++k) {
        __m512 scaled = _mm512_mul_ps(d[k], _mm512_permutexvar_ps(s.from[k], inv));
        s.store(yb + s.offset(k), s.lanes(k, n), _mm512_fmadd_ps(scaled, g, b));
      }
    });
  }

  // Three passes over the block (it stays in L1): mean, centered variance, output.
  template <int K>
  static void wide(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
                   int64_t cols) {
    const Wide<K> s(cols);
    __m512 g[K], b[K];
    for (int j = 0; j < K; ++j) {
      g[j] = _mm512_maskz_loadu_ps(s.mask(j), gamma + j * W);
      b[j] = _mm512_maskz_loadu_ps(s.mask(j), beta + j * W);
    }
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      __m512 t[W];
      for (int r = 0; r < W; ++r) {
        t[r] = _mm512_setzero_ps();
        if (r < n)
          for (int j = 0; j < K; ++j)
            t[r] = _mm512_add_ps(t[r], _mm512_maskz_loadu_ps(s.mask(j), xb + r * cols + j * W));
      }
      alignas(64) float mean[W], inv[W];
      _mm512_store_ps(mean, _mm512_div_ps(inRowOrder<W>(reduceRows<W>(t, Add())), s.cols_f));
      for (int r = 0; r < W; ++r) {
        t[r] = _mm512_setzero_ps();
        if (r < n) {
          __m512 m = _mm512_set1_ps(mean[r]);
          for (int j = 0; j < K; ++j) {
            __m512 d = _mm512_maskz_sub_ps(
                s.mask(j), _mm512_maskz_loadu_ps(s.mask(j), xb + r * cols + j * W), m);
            t[r] = _mm512_fmadd_ps(d, d, t[r]);
          }
        }
      }
      _mm512_store_ps(inv, invRootMean(inRowOrder<W>(reduceRows<W>(t, Add())), s.cols_f));
      for (int r = 0; r < n; ++r) {
        __m512 m = _mm512_set1_ps(mean[r]), i = _mm512_set1_ps(inv[r]);
        for (int j = 0; j < K; ++j) {
          __m512 v = _mm512_maskz_loadu_ps(s.mask(j), xb + r * cols + j * W);
          __m512 d = _mm512_mul_ps(_mm512_sub_ps(v, m), i);
          _mm512_mask_storeu_ps(yb + r * cols + j * W, s.mask(j), _mm512_fmadd_ps(d, g[j], b[j]));
        }
      }
    });
  }
};

struct MaskedSoftmax {
  // Row r's columns [0, r % C] take part; the rest are 0.
  template <int P, bool Dense>
  static void narrow(const float *x, float *y, int64_t rows, int64_t cols) {
    const Narrow<P, Dense> s(cols);
    const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
    const __m512i col = _mm512_and_si512(iota(), _mm512_set1_epi32(P - 1));
    const __m512i c = _mm512_set1_epi32(static_cast<int>(cols));
    const __m512i step = _mm512_set1_epi32(static_cast<int>(W % cols));
    // The last valid column (row mod C) of each block row, at the row's
    // lane in reduceRows' order, kept up to date block by block without a
    // division.
    alignas(64) int first[W];
    for (int r = 0; r < W; ++r)
      first[laneOfRow(P, r)] = static_cast<int>(r % cols);
    __m512i last = _mm512_load_si512(first);
    // Dense C divides 16: every block has the same rows mod C, so the same
    // valid lanes (masked softmax 65536x8: 2.41 -> 2.13 ns/row).
    __mmask16 same[P];
    for (int k = 0; k < P; ++k)
      same[k] = _mm512_cmple_epi32_mask(col, _mm512_permutexvar_epi32(s.from[k], last));
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      __m512 v[P], t[P];
      __mmask16 valid[P];
      for (int k = 0; k < P; ++k) {
        __mmask16 m = s.lanes(k, n);
        v[k] = s.load(m, xb + s.offset(k));
        valid[k] =
            Dense ? static_cast<__mmask16>(same[k] & m)
                  : _mm512_mask_cmple_epi32_mask(m, col, _mm512_permutexvar_epi32(s.from[k], last));
        t[k] = _mm512_mask_mov_ps(minus_inf, valid[k], v[k]);
      }
      __m512 mx = reduceRows<P>(t, Max());
      for (int k = 0; k < P; ++k) {
        __m512 e = exp16(_mm512_sub_ps(v[k], _mm512_permutexvar_ps(s.from[k], mx)));
        t[k] = v[k] = _mm512_maskz_mov_ps(valid[k], e); // excluded scores: exactly 0
      }
      __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), reduceRows<P>(t, Add()));
      for (int k = 0; k < P; ++k)
        s.store(yb + s.offset(k), s.lanes(k, n),
                _mm512_mul_ps(v[k], _mm512_permutexvar_ps(s.from[k], inv)));
      if (!Dense) {
        last = _mm512_add_epi32(last, step);
        last = _mm512_mask_sub_epi32(last, _mm512_cmpge_epi32_mask(last, c), last, c);
      }
    });
  }

  // Max, then exp stored and summed, then the scaling, over the valid packets.
  template <int K> static void wide(const float *x, float *y, int64_t rows, int64_t cols) {
    const Wide<K> s(cols);
    const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
    int64_t first = 0; // the block's first row mod C (C > 16: one subtraction wraps)
    eachBlock(x, y, rows, cols, [&](const float *xb, float *yb, int n) {
      int64_t valid[W];
      __m512 t[W];
      for (int r = 0; r < W; ++r) {
        int64_t last = first + r;
        valid[r] = (last >= cols ? last - cols : last) + 1;
        t[r] = minus_inf;
        if (r < n)
          for (int j = 0; j * W < valid[r]; ++j)
            t[r] = _mm512_max_ps(t[r], _mm512_mask_loadu_ps(minus_inf, firstLanes(valid[r] - j * W),
                                                            xb + r * cols + j * W));
      }
      alignas(64) float mx[W], inv[W];
      _mm512_store_ps(mx, inRowOrder<W>(reduceRows<W>(t, Max())));
      for (int r = 0; r < W; ++r) {
        t[r] = _mm512_setzero_ps();
        if (r >= n)
          continue;
        __m512 m = _mm512_set1_ps(mx[r]);
        for (int j = 0; j < K; ++j) {
          __mmask16 k = firstLanes(valid[r] - j * W);
          __m512 e = _mm512_setzero_ps();
          if (k) {
            e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, xb + r * cols + j * W), m));
            e = _mm512_maskz_mov_ps(k, e);
            t[r] = _mm512_add_ps(t[r], e);
          }
          _mm512_mask_storeu_ps(yb + r * cols + j * W, s.mask(j), e);
        }
      }
      _mm512_store_ps(inv,
                      inRowOrder<W>(_mm512_div_ps(_mm512_set1_ps(1.0f), reduceRows<W>(t, Add()))));
      for (int r = 0; r < n; ++r) {
        __m512 i = _mm512_set1_ps(inv[r]);
        for (int j = 0; j * W < valid[r]; ++j) {
          __mmask16 k = firstLanes(valid[r] - j * W);
          float *p = yb + r * cols + j * W;
          _mm512_mask_storeu_ps(p, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p), i));
        }
      }
      first += W;
      if (first >= cols)
        first -= cols;
    });
  }
};

// Calls Op's kernel for this C: narrow<P, C == P> up to 16 columns, else
// wide<ceil(C/16)>. 1 <= cols <= 64.
template <typename Op, typename... Args> void byColumns(int64_t cols, Args... args) {
  switch (cols) {
  case 1: return Op::template narrow<1, true>(args...);
  case 2: return Op::template narrow<2, true>(args...);
  case 3: return Op::template narrow<4, false>(args...);
  case 4: return Op::template narrow<4, true>(args...);
  case 5:
  case 6:
  case 7: return Op::template narrow<8, false>(args...);
  case 8: return Op::template narrow<8, true>(args...);
  case 16: return Op::template narrow<16, true>(args...);
  default: break;
  }
  if (cols < 16)
    return Op::template narrow<16, false>(args...);
  if (cols <= 32)
    return Op::template wide<2>(args...);
  if (cols <= 48)
    return Op::template wide<3>(args...);
  return Op::template wide<4>(args...);
}

// Rows across lanes pays off from half a block (one masked block of R < 16
// rows, ns per call, row-wise -> across lanes: RMSNorm C = 8, R = 1 6.5 ->
// 30, R = 4 16 -> 13, R = 8 34 -> 26; C = 64, R = 4 26 -> 32, R = 8 57 ->
// 52; masked softmax alike) up to kMaxRowsAcrossCols.
bool acrossLanes(int64_t rows, int64_t cols) {
  return rows >= W / 2 && cols >= 1 && cols <= kMaxRowsAcrossCols;
}

} // namespace

void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols) {
  if (!acrossLanes(rows, cols))
    return avx512::layerNorm(x, gamma, beta, y, rows, cols);
  byColumns<LayerNorm>(cols, x, gamma, beta, y, rows, cols);
}

void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols) {
  if (!acrossLanes(rows, cols))
    return avx512::rmsNorm(x, gamma, y, rows, cols);
  byColumns<RmsNorm>(cols, x, gamma, y, rows, cols);
}

void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols) {
  if (!acrossLanes(rows, cols))
    return avx512::maskedSoftmax(x, y, rows, cols);
  byColumns<MaskedSoftmax>(cols, x, y, rows, cols);
}

} // namespace lanejit::bench::avx512_rows
