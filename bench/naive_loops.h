// bench/naive_loops.h — the six library operators, and RMSNorm then int8
// quantization per row (rmsnorm_q8) and per block of 32 (rmsnorm_q8_0), as
// plain C++ loops.
//
// The baseline the bench (its naive peer) compares lanejit with: what a competent programmer
// writes straight from the formulas of docs/library.md (float accumulators,
// std::exp / std::tanh / std::sqrt), compiled with -O3 -march=native and no
// fast-math. Buffers are dense row-major; nothing here is tuned.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace lanejit::bench {

// inputs: the operator's inputs in the order of NaiveOp::inputs; outputs:
// its outputs in the program's order (float; int8_t for a q; uint16_t f16
// bits for rmsnorm_q8_0's scale).
using NaiveFn = void (*)(const float *const *inputs, void *const *outputs, int64_t rows,
                         int64_t cols);

struct NaiveOp {
  std::string_view name;                // the library program's name
  std::vector<std::string_view> inputs; // input names, in the order fn takes them
  NaiveFn fn;
};

// The loop for a library operator ("rope", "layernorm", ...), or nullptr.
const NaiveOp *naiveOp(std::string_view name);

namespace naive {
void rope(const float *x, const float *cos, const float *sin, float *y, int64_t rows, int64_t cols);
void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols);
void swiglu(const float *x, const float *u, float *y, int64_t rows, int64_t cols);
void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols);
void geluResidual(const float *x, const float *u, float *y, int64_t rows, int64_t cols);
void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols);
// rmsNorm's y per row, then scale = max|y| / 127 and q = y * (127 / max|y|)
// rounded to nearest-even, clamped to +-127 (0 for a zero row or NaN).
void rmsNormQ8(const float *x, const float *gamma, int8_t *q, float *scale, int64_t rows,
               int64_t cols);
// The same per block of 32 columns (cols a multiple of 32): scale, [R, C/32],
// = max|y[block]| / 127 in f32 stored as f16 bits; q from the f32 max.
void rmsNormQ8_0(const float *x, const float *gamma, int8_t *q, uint16_t *scale, int64_t rows,
                 int64_t cols);
} // namespace naive

} // namespace lanejit::bench
