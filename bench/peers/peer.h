// bench/peers/peer.h — the benchmark's non-lanejit variants ("peers") and
// the memory roofline, behind one small interface so the runner never knows
// which libraries were present at build time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanejit::bench {

// One case's buffers as the runner allocated them: 64-byte aligned, dense
// rows (row stride == cols for [R,C] tensors, C/2 for RoPE's cos/sin), in the
// library program's declaration order. Already filled and touched once.
// Every input holds elements of `dtype`: "f32", or "bf16" / "f16" (16-bit
// patterns, docs/element-types.md) when the case is the operator with its
// buffers in that type. Every output too, except rmsnorm_q8's, which are
// always q (int8 [R,C]) and scale (f32 [R,1]), and rmsnorm_q8_0's: q (int8
// [R,C]) and scale (f16 [R,C/32], ggml's Q8_0).
struct CaseBuffers {
  std::string op; // library::Entry name: rope, layernorm, swiglu, rmsnorm,
                  // gelu_residual, masked_softmax, rmsnorm_q8, rmsnorm_q8_0
  std::string dtype = "f32";
  int64_t rows = 0, cols = 0;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
};

// Everything a peer sets up (tensors wrapping the buffers, oneDNN
// primitives, ...) happens in prepare(), outside timing; call() runs the op
// once, writing the case's outputs.
class PreparedPeer {
public:
  virtual ~PreparedPeer() = default;
  virtual void call() = 0;
  // After a visit's timed calls, before its checks: puts the last call's
  // result in the case's outputs when call() leaves it elsewhere (a peer
  // whose fastest user form returns a fresh tensor). Not timed.
  virtual void finish() {}
  // What this preparation ran, when it depends on the case (the Inductor
  // kernels and their files); appended to the peer's description.
  virtual std::string details() const { return ""; }
  // The machine code call() runs, for the report's side-by-side reading
  // (lanejit inspect): object files (inside the bundle) and the functions
  // in them. Empty when there is nothing to read.
  struct CodeObject {
    std::filesystem::path file;
    std::vector<std::string> functions;
  };
  virtual std::vector<CodeObject> objects() const { return {}; }
};

// What a run will prepare, told to every peer before the first case: a
// peer whose set-up is expensive per process (Inductor compiles in a Python
// process) does it for all cases at once, and keeps what it builds under
// `dir`, inside the bundle, so the bundle hashes it.
struct RunPlan {
  struct Case {
    std::string op;
    int64_t rows = 0, cols = 0;
    std::string dtype = "f32";
  };
  std::vector<Case> cases;
  std::filesystem::path dir;
};

class Peer {
public:
  virtual ~Peer() = default;
  virtual std::string name() const = 0;        // short id: naive, avx512, torch, onednn
  virtual std::string description() const = 0; // how it runs, for the bundle
  virtual bool supports(const std::string &op) const = 0;
  // Whether it runs `op` with buffers of `dtype` (CaseBuffers::dtype); by
  // default, the operators it supports in f32 only.
  virtual bool runs(const std::string &op, const std::string &dtype) const {
    return dtype == "f32" && supports(op);
  }
  virtual std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &buffers) const = 0;
  // The same library on `threads` threads (named NAME-tN), or null when this
  // peer has no thread setting (naive loops, hand-written AVX-512).
  virtual std::unique_ptr<Peer> withThreads(int /*threads*/) const { return nullptr; }
  // See RunPlan. Optional: prepare() works without it.
  virtual void anticipate(const RunPlan & /*plan*/) {}
};

// A peer that cannot run one case on this machine (Inductor could not
// build it, say): the run skips the peer for that case and prints why,
// rather than failing; every other error from prepare() fails the run.
struct PeerSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// atol = rtol of the oracle check of a peer's output in a case of `dtype`,
// where lanejit's own check (atol = rtol = 5e-5 plus one unit in the last
// place) does not hold it: eager rounds every intermediate to a 16-bit type,
// so RoPE's and GELU + residual's differences of rounded products are off
// by units of the operands' last place. bf16: 2^-5, f16: 2^-8 (two units in
// the last place at 2.0); f32: 5e-5, the same as lanejit's.
double peerTolerance(const std::string &dtype);

// Appends, for t = 2 .. threads, every peer's withThreads(t): the peers at
// the thread counts of lanejit-t2 ... lanejit-tN.
void addThreadedPeers(std::vector<std::unique_ptr<Peer>> &peers, int threads);

// The peers this binary was built with, in a fixed order.
std::vector<std::unique_ptr<Peer>> availablePeers();

// The roofline: bytes a case must move per call (every input read once,
// every output written once, `element_bytes` each: 4 for f32, 2 for bf16 and
// f16; masked_softmax counts only the scores that take part, c <= r mod C,
// so the floor stays a floor; rmsnorm_q8's and quantize_q8's outputs are
// 1 byte per q and 4 per row's scale, rmsnorm_q8_0's and quantize_q8_0's 1
// byte per q and 2 per 32 columns' scale, whatever their inputs hold), and single-thread
// bandwidth measured now over arrays totalling that footprint (allocated and
// touched once, best of repeated passes within the budget). Errors are
// lanejit::Error(Kind::Bind): an unknown op or negative shape for bytesMoved,
// a non-positive footprint or budget for measureBandwidth.
int64_t bytesMoved(const std::string &op, int64_t rows, int64_t cols, int64_t element_bytes = 4);
// One stream's raw timings: samples of `passes` back-to-back passes, each
// moving `bytes_per_pass` (reads + writes). The rate is the best sample.
struct StreamSamples {
  int64_t bytes_per_pass = 0;
  int64_t passes = 0;
  std::vector<double> seconds;
};
struct Bandwidth {
  double copy_bytes_per_s = 0;  // a[i] = b[i]; counts read + write bytes
  double triad_bytes_per_s = 0; // a[i] = b[i] + s*c[i]; counts 3 streams
  StreamSamples copy, triad;    // what the two rates are the best of
};
Bandwidth measureBandwidth(int64_t footprint_bytes, double seconds_budget);
// How measureBandwidth samples a stream, over any `pass` moving
// `bytes_per_pass`: passes per sample double until a sample lasts >= 200
// us, and again whenever a later sample is shorter (its samples so far no
// longer count); then samples repeat until `budget` seconds (at least 3).
// Returns the best rate of the samples left in `out`.
double bestStreamRate(const std::function<void()> &pass, int64_t bytes_per_pass, double budget,
                      StreamSamples &out);

// The ATen CPU capability the torch peer runs with, for the environment
// record; "" when the torch peer was not built, "unavailable (why)" when its
// module does not load. One line, e.g.
//   "AVX512 (probe, SwiGLU 1024x4097: ATen's own choice AVX2 13.691 ms/call,
//    avx512 (AVX512) 10.626 ms/call; chose avx512)"
//   "AVX2 (ATEN_CPU_CAPABILITY=avx2 set by the user)".
// The first word is what ATen reports using. ATen reads ATEN_CPU_CAPABILITY
// once, at its first dispatch, so the first call (of this, or of the torch
// peer's prepare/description) runs the probe, in child processes, and sets
// the variable before any ATen call in this process. Idempotent.
std::string atenCpuCapability();

// Files holding peer code that this binary loads at run time (today the
// torch peer's module, lanejit_peer_torch.so, once loaded), for the
// environment record's binary hashes. Empty when none is loaded.
std::vector<std::string> peerModules();

} // namespace lanejit::bench
