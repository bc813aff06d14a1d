// bench/peers/avx512_bf16_kernels.h — RMSNorm and masked softmax on bf16
// rows, hand-written with AVX-512 intrinsics as a careful engineer writes
// them: 16 bf16 elements widened to f32 per packet (vpmovzxwd, shift), f32
// arithmetic, one rounding to nearest-even per stored element (integer
// steps; AVX512_BF16's vcvtneps2bf16 is not on every AVX-512 CPU), masked
// tails. Softmax recomputes exp in its last pass rather than storing and
// re-reading rounded intermediates.
//
// Compiled with -mavx512f/vl/dq/bw, this file only, like avx512_kernels.cpp.
// Call only when the CPU has AVX-512F, DQ, VL and BW. Buffers dense
// row-major, elements as their 16-bit patterns.
#pragma once

#include <cstdint>

namespace lanejit::bench::avx512 {

void rmsNormBF16(const uint16_t *x, const uint16_t *gamma, uint16_t *y, int64_t rows,
                 int64_t cols);
void maskedSoftmaxBF16(const uint16_t *x, uint16_t *y, int64_t rows, int64_t cols);

} // namespace lanejit::bench::avx512
