/* lanejit/launch_abi.h — the native entry's argument block: the one
 * definition of the kernel ABI, valid C and C++ (docs/architecture.md).
 *
 * lanejit::LaunchArgs (kernel.h) is this struct; codegen loads its fields at
 * offsetof() of it (src/codegen/emit_kernel.cpp); `lanejit aot` writes this
 * same field list into its header (src/aot/aot.cpp stringifies
 * LANEJIT_LAUNCH_ARGS_FIELDS) with static asserts on the offsets the object
 * was compiled against, so a C caller with a different layout fails to
 * compile instead of passing a short struct.
 */
#ifndef LANEJIT_LAUNCH_ABI_H
#define LANEJIT_LAUNCH_ABI_H

#include <stddef.h>
#include <stdint.h>

/* buffers:     inputs, then outputs, in declaration order
 * row_strides: in elements of each buffer's type (f32, bf16, f16, i8), same order
 * rows:        R; cols: the bound C
 * workspace:   the entry's scratch memory, private to one call: as many
 *              floats as Kernel::workspaceFloats(C) (the AOT header's
 *              lanejit_NAME_workspace_floats(C)), 64-byte aligned; may be
 *              null when that is 0. */
#define LANEJIT_LAUNCH_ARGS_FIELDS                                                                 \
  void *const *buffers;                                                                            \
  const int64_t *row_strides;                                                                      \
  int64_t rows;                                                                                    \
  int64_t cols;                                                                                    \
  float *workspace;

#ifndef LANEJIT_LAUNCH_ARGS_DEFINED
#define LANEJIT_LAUNCH_ARGS_DEFINED
typedef struct lanejit_launch_args {
  LANEJIT_LAUNCH_ARGS_FIELDS
} lanejit_launch_args;
#endif

/* Alignment of the workspace, in bytes. */
#define LANEJIT_WORKSPACE_ALIGN_BYTES 64

/* The layout is the LP64 one (x86-64 SysV and AArch64 AAPCS64 agree) and
 * is part of the ABI: changing it must be deliberate (codegen follows
 * offsetof, old AOT objects do not). */
#ifdef __cplusplus
#define LANEJIT_ABI_ASSERT(cond, message) static_assert(cond, message)
#else
#define LANEJIT_ABI_ASSERT(cond, message) _Static_assert(cond, message)
#endif
LANEJIT_ABI_ASSERT(sizeof(void *) == 8 && sizeof(int64_t) == 8, "lanejit kernels are 64-bit");
LANEJIT_ABI_ASSERT(offsetof(lanejit_launch_args, buffers) == 0, "lanejit_launch_args layout");
LANEJIT_ABI_ASSERT(offsetof(lanejit_launch_args, row_strides) == 8, "lanejit_launch_args layout");
LANEJIT_ABI_ASSERT(offsetof(lanejit_launch_args, rows) == 16, "lanejit_launch_args layout");
LANEJIT_ABI_ASSERT(offsetof(lanejit_launch_args, cols) == 24, "lanejit_launch_args layout");
LANEJIT_ABI_ASSERT(offsetof(lanejit_launch_args, workspace) == 32, "lanejit_launch_args layout");
LANEJIT_ABI_ASSERT(sizeof(lanejit_launch_args) == 40, "lanejit_launch_args layout");

/* The entry: computes rows [row_begin, row_end) of the bound problem. */
typedef void (*lanejit_entry_fn)(const lanejit_launch_args *args, int64_t row_begin,
                                 int64_t row_end);

#ifdef __cplusplus
namespace lanejit {
/* The same two names in C++: what the JIT, the runtime and callers that
 * bind arguments once (benchmarks) use. */
using LaunchArgs = ::lanejit_launch_args;
using NativeEntry = ::lanejit_entry_fn;
} /* namespace lanejit */
#endif

#endif
