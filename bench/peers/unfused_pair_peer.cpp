// The `unfused-pair` peer: RMSNorm -> int8 as two lanejit kernels, the way
// a caller without the fused entry runs it: the rmsnorm kernel writes y
// (f32 [R,C]) to memory, then the quantize kernel reads it back and writes
// q and scale: quantize_q8 for rmsnorm_q8 (per row), quantize_q8_0 for
// rmsnorm_q8_0 (per block of 32, f16 scales). Fused against this pair is
// the fusion's own measure (issue 30: fused <= 0.6x the pair). Both kernels
// are compiled with the bench's default options and called through their
// native entries with argument blocks bound once, like the lanejit variant;
// the intermediate and the workspaces are allocated and touched once, in
// prepare(). A bf16 or f16 case's rmsnorm kernel reads x and gamma in that
// type and still writes f32, so the pair gives the fused kernel's bits
// (library.h).
//
// unfused-pair-tN: each kernel's entry on lanejit's pool, at most N
// threads (Kernel::runEntry), against lanejit-tN.
#include "peers/peer_factories.h"

#include <lanejit/check.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <memory>
#include <string>
#include <vector>

namespace lanejit::bench {
namespace {

DType storageOf(const std::string &dtype) {
  return dtype == "bf16" ? DType::BF16 : dtype == "f16" ? DType::F16 : DType::F32;
}

// One kernel bound to its buffers: the entry run() would use at this shape,
// its argument block and its workspace.
class BoundKernel {
public:
  BoundKernel(const Program &program, const CompileOptions &options, std::vector<void *> buffers,
              std::vector<int64_t> strides, int64_t rows, int64_t cols, int threads)
      : kernel_(compile(program, options)), entry_(kernel_.nativeEntry(rows, cols)),
        buffers_(std::move(buffers)), strides_(std::move(strides)), threads_(threads) {
    int64_t floats = kernel_.workspaceFloats(cols);
    if (floats > 0) {
      workspace_ = check::GuardedBuffer(1, floats, floats);
      workspace_.fill(0);
    }
    args_ = LaunchArgs{buffers_.data(), strides_.data(), rows, cols,
                       floats > 0 ? workspace_.data() : nullptr};
  }
  void call() const {
    if (threads_ > 1)
      kernel_.runEntry(args_, threads_);
    else
      entry_(&args_, 0, args_.rows);
  }

private:
  Kernel kernel_;
  NativeEntry entry_;
  std::vector<void *> buffers_;
  std::vector<int64_t> strides_;
  check::GuardedBuffer workspace_;
  LaunchArgs args_{};
  int threads_;
};

class PairPrepared : public PreparedPeer {
public:
  PairPrepared(const CaseBuffers &b, int threads)
      : y_(b.rows, b.cols, b.cols, DType::F32) {
    y_.fill(0); // touched once, here
    CompileOptions options = CompileOptions::fromEnvironment();
    options.threads = threads;
    // rmsnorm: x and gamma as the case holds them, y in f32.
    Program norm = withStorage(library::rmsNorm(), storageOf(b.dtype));
    norm.outputs[0].type = DType::F32;
    void *x = const_cast<void *>(b.inputs[0]), *gamma = const_cast<void *>(b.inputs[1]);
    norm_ = std::make_unique<BoundKernel>(
        norm, options, std::vector<void *>{x, gamma, y_.raw()},
        std::vector<int64_t>{b.cols, b.cols, b.cols}, b.rows, b.cols, threads);
    // Q8_0's scales: one per 32 columns, so a row of them is C/32 long.
    const bool blocks = b.op == "rmsnorm_q8_0";
    quantize_ = std::make_unique<BoundKernel>(
        blocks ? library::quantizeQ8_0() : library::quantizeQ8(), options,
        std::vector<void *>{y_.raw(), b.outputs[0], b.outputs[1]},
        std::vector<int64_t>{b.cols, b.cols, blocks ? b.cols / 32 : 1}, b.rows, b.cols, threads);
  }
  void call() override {
    norm_->call();
    quantize_->call();
  }

private:
  check::GuardedBuffer y_; // the f32 intermediate
  // Held by pointer: the argument blocks point into each one's members.
  std::unique_ptr<BoundKernel> norm_, quantize_;
};

class UnfusedPairPeer : public Peer {
public:
  explicit UnfusedPairPeer(int threads = 1) : threads_(threads) {}
  std::string name() const override {
    return threads_ == 1 ? "unfused-pair" : "unfused-pair-t" + std::to_string(threads_);
  }
  std::string description() const override {
    return "lanejit's rmsnorm kernel then its quantize_q8 (rmsnorm_q8) or quantize_q8_0 "
           "(rmsnorm_q8_0) kernel: two native entry calls "
           "(default options), an f32 [R,C] intermediate written and read back (allocated "
           "and touched once), x and gamma in the case's type; " +
           (threads_ == 1 ? std::string("one thread")
                          : "each on lanejit's pool, at most " + std::to_string(threads_) +
                                " threads (Kernel::runEntry)");
  }
  bool supports(const std::string &op) const override {
    return op == "rmsnorm_q8" || op == "rmsnorm_q8_0";
  }
  bool runs(const std::string &op, const std::string &dtype) const override {
    return supports(op) && (dtype == "f32" || dtype == "bf16" || dtype == "f16");
  }
  std::unique_ptr<Peer> withThreads(int threads) const override {
    return std::make_unique<UnfusedPairPeer>(threads);
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    return std::make_unique<PairPrepared>(b, threads_);
  }

private:
  int threads_;
};

} // namespace

std::unique_ptr<Peer> makeUnfusedPairPeer() {
  return std::make_unique<UnfusedPairPeer>();
}

} // namespace lanejit::bench
