/* bench/neon/neon_kernels.h — hand-written AArch64 NEON peers of lanejit's
 * RMSNorm and masked softmax (docs/aarch64-estimates.md): the bar for the
 * llvm-mca cycle estimate on apple-m1, not a timed peer (no ARM machine
 * here). Plain C, so the cross toolchain builds them without the project.
 *
 * Both compute rows [row_begin, row_end) of an R x C problem whose rows sit
 * `stride` floats apart (x and y alike); y must not overlap x (as the
 * hand-written AVX-512 peers assume). The definitions are the library's
 * (docs/library.md):
 *   rmsnorm:        y = x * (1 / sqrt(mean(x^2) + 1e-5)) * gamma
 *   masked softmax: row r keeps the columns c <= r mod C; y is the softmax
 *                   over them and an exact 0 elsewhere.
 */
#ifndef LANEJIT_BENCH_NEON_KERNELS_H
#define LANEJIT_BENCH_NEON_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void neon_rmsnorm(const float *x, const float *gamma, float *y, int64_t cols, int64_t stride,
                  int64_t row_begin, int64_t row_end);
void neon_masked_softmax(const float *x, float *y, int64_t cols, int64_t stride,
                         int64_t row_begin, int64_t row_end);

#ifdef __cplusplus
}
#endif

#endif
