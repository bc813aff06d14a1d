/* The AArch64 program tests/bench/neon_peers_test.cpp runs under qemu: one
 * NEON peer on inputs the host wrote, its output back to the host, which
 * compares it with lanejit's FP64 oracle.
 *
 *   check_driver OP R C STRIDE IN OUT
 *
 * OP: rmsnorm | masked_softmax. IN holds x ((R-1)*STRIDE + C floats) and,
 * for rmsnorm, gamma (C floats); OUT receives y in x's layout. Each input
 * ends where a page ends and the next page is inaccessible, so a read past
 * the last element faults; y sits between sentinels, and a store outside
 * its rows' C columns (padding or past the end) fails the run (exit 3).
 * The rows go in two calls, [0, R/2) and [R/2, R), so that row_begin > 0
 * (masked softmax's mask depends on the absolute row) is exercised. */
#include "neon_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const uint32_t kSentinel = 0x7fbadbadu; /* a NaN no kernel computes */
enum { kGuard = 64 };

/* n floats ending at a page end, an inaccessible page after them. */
static float *fencedFloats(int64_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t bytes = (size_t)n * sizeof(float);
  size_t span = (bytes + page - 1) / page * page;
  unsigned char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base + span, page, PROT_NONE) != 0) {
    perror("mmap");
    exit(2);
  }
  return (float *)(base + span - bytes);
}

static void readFloats(FILE *f, float *p, int64_t n, const char *what) {
  if (fread(p, sizeof(float), (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "short input file (%s)\n", what);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s rmsnorm|masked_softmax R C STRIDE IN OUT\n", argv[0]);
    return 2;
  }
  const char *op = argv[1];
  int64_t rows = atoll(argv[2]), cols = atoll(argv[3]), stride = atoll(argv[4]);
  int rms = !strcmp(op, "rmsnorm");
  if ((!rms && strcmp(op, "masked_softmax")) || rows < 1 || cols < 1 || stride < cols) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  int64_t n = (rows - 1) * stride + cols;
  FILE *in = fopen(argv[5], "rb");
  if (!in) {
    perror(argv[5]);
    return 2;
  }
  float *x = fencedFloats(n), *gamma = rms ? fencedFloats(cols) : NULL;
  readFloats(in, x, n, "x");
  if (rms)
    readFloats(in, gamma, cols, "gamma");
  fclose(in);

  uint32_t *ybits = malloc((size_t)(n + 2 * kGuard) * sizeof(uint32_t));
  if (!ybits)
    return 2;
  for (int64_t i = 0; i < n + 2 * kGuard; ++i)
    ybits[i] = kSentinel;
  float *y = (float *)(ybits + kGuard);

  int64_t half = rows / 2;
  if (rms) {
    neon_rmsnorm(x, gamma, y, cols, stride, 0, half);
    neon_rmsnorm(x, gamma, y, cols, stride, half, rows);
  } else {
    neon_masked_softmax(x, y, cols, stride, 0, half);
    neon_masked_softmax(x, y, cols, stride, half, rows);
  }

  for (int64_t i = -kGuard; i < n + kGuard; ++i) {
    int inside = i >= 0 && i < n && i % stride < cols;
    if (!inside && ybits[kGuard + i] != kSentinel) {
      fprintf(stderr, "store outside the rows' columns at element %lld\n", (long long)i);
      return 3;
    }
  }
  FILE *out = fopen(argv[6], "wb");
  if (!out || fwrite(y, sizeof(float), (size_t)n, out) != (size_t)n || fclose(out) != 0) {
    perror(argv[6]);
    return 2;
  }
  return 0;
}
