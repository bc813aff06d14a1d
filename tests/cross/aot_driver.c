/* The AOT C driver of tests/cross: an aarch64 kernel's `lanejit aot`
 * object and header, linked by aarch64-linux-gnu-gcc into this program,
 * run under qemu-aarch64. No LLVM, no lanejit library: the header and the
 * object only.
 *
 * Compiled with -DLANEJIT_ENTRY=<entry symbol>
 * -DLANEJIT_WORKSPACE_FLOATS=<the header's workspace function>
 * -DLANEJIT_BUFFERS=<the header's buffer count>.
 * Usage: driver ROWS COLS THREADS then per buffer, in the entry's order:
 *   in|out FILE ROW_STRIDE BYTES
 * An input's FILE holds its bytes; an output's FILE holds its first
 * contents and gets what the kernel left. THREADS contiguous row ranges
 * run on threads of their own, each with its own copy of the args and
 * its own workspace, as the header says to parallelise. */
#include "kernel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct range {
  lanejit_launch_args args;
  int64_t begin, end;
};

static void *run_range(void *p) {
  struct range *r = p;
  LANEJIT_ENTRY(&r->args, r->begin, r->end);
  return NULL;
}

static int read_file(const char *path, void *into, size_t bytes) {
  FILE *f = fopen(path, "rb");
  int ok = f && fread(into, 1, bytes, f) == bytes;
  if (f)
    fclose(f);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 4 || (argc - 4) % 4 != 0 || (argc - 4) / 4 != LANEJIT_BUFFERS) {
    fprintf(stderr, "usage: driver ROWS COLS THREADS, then %d x (in|out FILE STRIDE BYTES)\n",
            LANEJIT_BUFFERS);
    return 2;
  }
  int64_t rows = atoll(argv[1]), cols = atoll(argv[2]);
  int threads = atoi(argv[3]);
  if (threads < 1 || threads > 8)
    return 2;
  int n = (argc - 4) / 4;
  void *buffers[64];
  int64_t strides[64];
  for (int i = 0; i < n; ++i) {
    char **a = argv + 4 + 4 * i;
    size_t bytes = (size_t)atoll(a[3]);
    buffers[i] = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    strides[i] = atoll(a[2]);
    if (!buffers[i] || !read_file(a[1], buffers[i], bytes)) {
      fprintf(stderr, "cannot read %s\n", a[1]);
      return 3;
    }
  }
  /* Exactly the floats the header asks for, then a sentinel that shows an
     undersized count. */
  int64_t ws_floats = LANEJIT_WORKSPACE_FLOATS(cols);
  struct range ranges[8];
  pthread_t ids[8];
  unsigned char *workspaces[8];
  for (int t = 0; t < threads; ++t) {
    workspaces[t] = aligned_alloc(64, (size_t)(ws_floats + 16) * sizeof(float));
    memset(workspaces[t] + ws_floats * sizeof(float), 0xab, 16 * sizeof(float));
    lanejit_launch_args args = {buffers, strides, rows, cols,
                                ws_floats ? (float *)workspaces[t] : NULL};
    ranges[t].args = args;
    ranges[t].begin = rows * t / threads;
    ranges[t].end = rows * (t + 1) / threads;
    if (pthread_create(&ids[t], NULL, run_range, &ranges[t]) != 0)
      return 6;
  }
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  for (int t = 0; t < threads; ++t)
    for (size_t i = 0; i < 16 * sizeof(float); ++i)
      if (workspaces[t][ws_floats * sizeof(float) + i] != 0xab) {
        fprintf(stderr, "the entry wrote past its %lld workspace floats\n", (long long)ws_floats);
        return 5;
      }
  for (int i = 0; i < n; ++i) {
    char **a = argv + 4 + 4 * i;
    if (strcmp(a[0], "out") != 0)
      continue;
    size_t bytes = (size_t)atoll(a[3]);
    FILE *f = fopen(a[1], "wb");
    if (!f || fwrite(buffers[i], 1, bytes, f) != bytes) {
      fprintf(stderr, "cannot write %s\n", a[1]);
      return 4;
    }
    fclose(f);
  }
  return 0;
}
