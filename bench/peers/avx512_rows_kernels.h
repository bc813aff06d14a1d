// bench/peers/avx512_rows_kernels.h — masked softmax, RMSNorm and LayerNorm
// hand-written with AVX-512 intrinsics for narrow rows, rows across lanes:
// 16 rows at a time, their per-row statistics (max, sums, 1/sqrt, 1/sum)
// one row per lane, so a block of 16 rows pays one vector sqrt and divide
// instead of 16 horizontal reductions and 16 scalar ones.
//
// A block's 16 rows are loaded as they lie in memory (C <= 16: each row
// padded to P = the next power of two >= C lanes, 16/P rows per packet,
// with expand loads when C < P; 16 < C <= 64: a row's packets added into
// one). Reducing the block is an in-register transpose fused with the
// reduction: pairs of packets are combined by two shuffles and one
// vertical op, halving the lanes per row each step, until one packet holds
// the 16 rows' results, one lane per row. The results go back to the row
// layout with one permute per packet. Rows past the last full block are
// masked; no load or store touches memory outside the rows x cols buffers.
// Above kMaxRowsAcrossCols columns, and below 8 rows (measured faster so),
// the row-wise kernels of avx512_kernels.h run.
//
// Like avx512_kernels.cpp, avx512_rows_kernels.cpp alone is compiled with
// -mavx512* and includes no C++ library templates. Call only when the CPU
// has AVX-512F, DQ and VL. Buffers dense row-major.
#pragma once

#include <cstdint>

namespace lanejit::bench::avx512_rows {

// The widest rows run across lanes (chosen by measurement, see the .cpp).
constexpr int64_t kMaxRowsAcrossCols = 64;

void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols);
void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols);
void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols);

} // namespace lanejit::bench::avx512_rows
