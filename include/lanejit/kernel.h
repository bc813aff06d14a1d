// lanejit/kernel.h — compiling a Program and calling the result.
//
//   Kernel k = compile(library::layerNorm());
//   k.run({BufferRef::matrix(x, R, C), BufferRef::vector(g, C), BufferRef::vector(b, C)},
//         {BufferRef::matrix(y, R, C)});
//
// compile() is thread-safe and cached by (program text, options, target) in a
// bounded cache (lanejit/kernel_cache.h).
// run() checks shapes, strides, null pointers and output/output overlap and
// throws Error(Kind::Bind) with a clear message (a thread's last checked
// binding is remembered: a call with the same kernel and identical buffer
// references skips the checks); bind() does the checks once for many calls; inputs that overlap
// outputs are handled by a safe path, never assumed distinct. run() allocates nothing on the heap
// once a kernel has seen its largest shape.
#pragma once

#include <lanejit/bound_call.h>
#include <lanejit/buffer.h>
#include <lanejit/ir.h>
#include <lanejit/launch_abi.h>
#include <lanejit/options.h>
#include <lanejit/report.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lanejit {

// LaunchArgs (the native entry's argument block) and NativeEntry are
// lanejit/launch_abi.h's, where the fields are documented.

class Kernel {
public:
  // Buffers in declaration order. Throws Error(Kind::Bind) on bad buffers,
  // and Error(Kind::Compile) (as nativeEntry() does) when the kernel was
  // compiled for CPU features this machine lacks (target_cpu, +features).
  void run(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs) const;
  void run(std::initializer_list<BufferRef> inputs,
           std::initializer_list<BufferRef> outputs) const {
    run(std::span<const BufferRef>(inputs.begin(), inputs.size()),
        std::span<const BufferRef>(outputs.begin(), outputs.size()));
  }
  // The same on at most `threads` threads for this call (1 to 256, else
  // Error(Kind::Bind)), instead of options().threads. Rows are split across
  // the process's pool when the compile report's cost model says the call
  // is worth it; any thread count gives the same bits.
  void run(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs,
           int threads) const;
  void run(std::initializer_list<BufferRef> inputs, std::initializer_list<BufferRef> outputs,
           int threads) const {
    run(std::span<const BufferRef>(inputs.begin(), inputs.size()),
        std::span<const BufferRef>(outputs.begin(), outputs.size()), threads);
  }

  // Checks the buffers once and returns a call bound to them
  // (lanejit/bound_call.h); throws what run() throws, at bind time.
  BoundCall bind(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs) const;
  BoundCall bind(std::initializer_list<BufferRef> inputs,
                 std::initializer_list<BufferRef> outputs) const {
    return bind(std::span<const BufferRef>(inputs.begin(), inputs.size()),
                std::span<const BufferRef>(outputs.begin(), outputs.size()));
  }

  // The compiled function itself, for callers that bind arguments once
  // (benchmarks). It performs none of run()'s checks: the caller guarantees
  // shapes, strides and a workspace of workspaceFloats(cols) floats. It
  // handles an input that is exactly an output (same address and row
  // stride) itself; any other overlap between an input and an output must
  // be staged by the caller, as run() does.
  NativeEntry nativeEntry() const;
  // The entry run() uses for calls of rows x cols, with the same contract
  // (it must only be called with args.cols == cols; any row range): the
  // entry of the configuration a tune record chose for that shape
  // (lanejit/tune.h), else the
  // rows-across-lanes entry for that C when the kernel's mapping rule picks
  // it (report().mapping), else the packet-local entry compiled for that C
  // when CompileOptions::specialize_columns applies, else nativeEntry().
  // Either is compiled on this request if not yet built. Same outputs bit
  // for bit. JIT only: the object (inspect, aot) holds nativeEntry().
  NativeEntry nativeEntry(int64_t rows, int64_t cols) const;
  // The native entry over rows [0, args.rows) split across the pool as run()
  // splits them, on at most `threads` threads: the calling thread uses
  // args.workspace, each worker a workspace of its own. None of run()'s
  // checks (benchmarks bind args once and call this).
  void runEntry(const LaunchArgs &args, int threads) const;
  int64_t workspaceFloats(int64_t cols) const;
  // The workspace's slots in order, as functions of C: slot i holds
  // slots[i] floats rounded up to a multiple of 16 (64 bytes), packed from
  // the start; workspaceFloats(C) is their sum. `lanejit aot` writes this
  // rule into its header.
  const std::vector<Dim> &workspaceSlots() const;

  const Program &program() const;
  const CompileOptions &options() const;
  const CompileReport &report() const;
  // Textual stages kept for `lanejit dump`: "passes" (the IR or plan after
  // every pass that changed it, with timings), "ir" (after passes), "plan"
  // (traversals, workspace, alias handling), "llvm-unoptimized", "llvm"
  // (optimised module), "asm".
  std::string dump(const std::string &stage) const;
  // The code stages ("llvm-unoptimized", "llvm", "asm") of the packet-local
  // entry specialised for `cols` columns (CompileOptions::
  // specialize_columns), which run() uses for short rows of that C.
  std::string dump(const std::string &stage, int64_t cols) const;
  // The same stages of the rows-across-lanes entry for `cols` columns
  // (1 to 64), which run() uses where the mapping rule picks it.
  std::string dumpRowsAcrossLanes(const std::string &stage, int64_t cols) const;
  // The relocatable object the JIT linked for this kernel (ELF bytes), and
  // its entry's symbol in it; what `lanejit inspect` reads and `lanejit aot`
  // writes (include/lanejit/inspect.h).
  const std::string &object() const;
  const std::string &entrySymbol() const;

  struct Impl;
  explicit Kernel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

private:
  std::shared_ptr<Impl> impl_;
};

Kernel compile(const Program &program,
               const CompileOptions &options = CompileOptions::fromEnvironment());

} // namespace lanejit
