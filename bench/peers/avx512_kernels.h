// bench/peers/avx512_kernels.h — the six operators hand-written with AVX-512
// intrinsics, as a careful engineer writes them: 16 f32 lanes, masked loads
// and stores for the tail packet, a polynomial exp (SiLU, softmax, tanh via
// exp), two-pass LayerNorm, one accumulator per reduction.
//
// avx512_kernels.cpp is the only file compiled with -mavx512*; it includes no
// C++ library templates, so no AVX-512 copy of an inline function can be
// picked by the linker for other files. Call only when the CPU has AVX-512F,
// DQ and VL. Buffers dense row-major (cos/sin rows of C/2).
#pragma once

#include <cstdint>

namespace lanejit::bench::avx512 {

void rope(const float *x, const float *cos, const float *sin, float *y, int64_t rows, int64_t cols);
void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int64_t rows,
               int64_t cols);
void swiglu(const float *x, const float *u, float *y, int64_t rows, int64_t cols);
void rmsNorm(const float *x, const float *gamma, float *y, int64_t rows, int64_t cols);
void geluResidual(const float *x, const float *u, float *y, int64_t rows, int64_t cols);
void maskedSoftmax(const float *x, float *y, int64_t rows, int64_t cols);

} // namespace lanejit::bench::avx512
