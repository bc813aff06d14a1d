// The `torch` peer: PyTorch eager through libtorch's C++ API (ATen), the pinned torch wheel's.
// The caller's buffers are wrapped with at::from_blob (no copies); every op
// writes through an out= form into the output or into temporaries allocated
// and touched in prepare(). Inference mode (no autograd bookkeeping) and one
// thread (the protocol is single-thread). The only torch file: its headers
// are heavy, so they stay out of every header. Built as the module
// lanejit_peer_torch.so (torch_module.h), with aten_capability.cpp and
// peer_checks.cpp.
#include "peers/aten_capability.h"
#include "peers/peer_factories.h"
#include "peers/torch_module.h"

#include <lanejit/error.h>

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/Version.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/where.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>

namespace lanejit::bench {
namespace {

std::string capabilityLine();

// Chooses the capability (before any ATen call), then sets one thread.
void initTorchOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    chooseAtenCapability();
    at::set_num_threads(1);
  });
}

// The case's element type: eager runs every op in it, as a model held in
// bf16 or f16 does.
at::ScalarType scalarType(const std::string &dtype) {
  if (dtype == "bf16")
    return at::kBFloat16;
  if (dtype == "f16")
    return at::kHalf;
  return at::kFloat;
}

at::Tensor wrap(const void *p, at::IntArrayRef sizes, at::ScalarType type) {
  return at::from_blob(const_cast<void *>(p), sizes, at::TensorOptions().dtype(type));
}

// A temporary, allocated and touched once here rather than per call.
at::Tensor scratch(at::IntArrayRef sizes, at::ScalarType type) {
  return at::empty(sizes, at::TensorOptions().dtype(type)).fill_(0);
}

// A timed body, and what (untimed) puts its last result into y.
struct Body {
  std::function<void()> call;
  std::function<void()> finish = [] {};
};

class TorchPrepared : public PreparedPeer {
public:
  TorchPrepared(Body body, int threads) : body_(std::move(body)), threads_(threads) {}
  void call() override {
    // One process-wide setting shared by torch and torch-tN: set it when a
    // visit of the other count ran last (the check is a load; ~ns).
    if (at::get_num_threads() != threads_)
      at::set_num_threads(threads_);
    c10::InferenceMode inference;
    body_.call();
  }
  void finish() override {
    c10::InferenceMode inference;
    body_.finish();
  }

private:
  Body body_;
  int threads_;
};

Body bodyFor(const CaseBuffers &b) {
  const int64_t R = b.rows, C = b.cols;
  const at::ScalarType type = scalarType(b.dtype);
  auto wrap = [type](const void *p, at::IntArrayRef sizes) { return bench::wrap(p, sizes, type); };
  auto scratch = [type](at::IntArrayRef sizes) { return bench::scratch(sizes, type); };
  const std::vector<const void *> &in = b.inputs;
  if (b.op == "rmsnorm_q8") {
    // lanejit's definition: x and gamma widened to f32 (in a bf16 or f16
    // case once per call, as x.float() does), RMSNorm as the rmsnorm body
    // computes it, then scale = amax/127 and q = round(y * (127/amax))
    // (half to even), clamped to +-127, 0 for a zero row, cast to int8.
    at::Tensor x_in = wrap(in[0], {R, C}), g_in = wrap(in[1], {C});
    at::Tensor q = bench::wrap(b.outputs[0], {R, C}, at::kChar);
    at::Tensor scale = bench::wrap(b.outputs[1], {R, 1}, at::kFloat);
    const bool widen = type != at::kFloat;
    auto f32 = [](at::IntArrayRef sizes) { return bench::scratch(sizes, at::kFloat); };
    at::Tensor x = widen ? f32({R, C}) : x_in, g = widen ? f32({C}) : g_in;
    at::Tensor y = f32({R, C}), t = f32({R, C}), ms = f32({R, 1}), amax = f32({R, 1}),
               inv = f32({R, 1});
    return {[=]() mutable {
      if (widen) {
        x.copy_(x_in);
        g.copy_(g_in);
      }
      at::mul_out(t, x, x);
      at::mean_out(ms, t, {1}, /*keepdim=*/true);
      ms.add_(1e-5).sqrt_();
      at::div_out(y, x, ms);
      y.mul_(g);
      at::abs_out(t, y);
      at::amax_out(amax, t, {1}, /*keepdim=*/true);
      scale.copy_(amax).div_(127);
      inv.fill_(127).div_(amax); // 127/amax in one rounding, as lanejit
      inv.masked_fill_(amax.eq(0), 0);
      at::mul_out(t, y, inv);
      t.round_().clamp_(-127, 127);
      q.copy_(t);
    }};
  }
  if (b.op == "rmsnorm_q8_0") {
    // The same per block of 32 columns (ggml's Q8_0), on [R, C/32, 32]
    // views: amax per block, scale = amax/127 in f32 stored as f16 (copy_
    // rounds to nearest-even), q = round(y * (127/amax)) from the f32 amax.
    const int64_t B = C / 32;
    at::Tensor x_in = wrap(in[0], {R, C}), g_in = wrap(in[1], {C});
    at::Tensor q = bench::wrap(b.outputs[0], {R, C}, at::kChar);
    at::Tensor scale = bench::wrap(b.outputs[1], {R, B, 1}, at::kHalf);
    const bool widen = type != at::kFloat;
    auto f32 = [](at::IntArrayRef sizes) { return bench::scratch(sizes, at::kFloat); };
    at::Tensor x = widen ? f32({R, C}) : x_in, g = widen ? f32({C}) : g_in;
    at::Tensor y = f32({R, C}), t = f32({R, C}), ms = f32({R, 1}), amax = f32({R, B, 1}),
               d = f32({R, B, 1}), inv = f32({R, B, 1});
    at::Tensor y3 = y.view({R, B, 32}), t3 = t.view({R, B, 32});
    return {[=]() mutable {
      if (widen) {
        x.copy_(x_in);
        g.copy_(g_in);
      }
      at::mul_out(t, x, x);
      at::mean_out(ms, t, {1}, /*keepdim=*/true);
      ms.add_(1e-5).sqrt_();
      at::div_out(y, x, ms);
      y.mul_(g);
      at::abs_out(t, y);
      at::amax_out(amax, t3, {2}, /*keepdim=*/true);
      d.copy_(amax).div_(127);
      scale.copy_(d);
      inv.fill_(127).div_(amax); // 127/amax in one rounding, as lanejit
      inv.masked_fill_(amax.eq(0), 0);
      at::mul_out(t3, y3, inv);
      t.round_().clamp_(-127, 127);
      q.copy_(t);
    }};
  }
  at::Tensor y = wrap(b.outputs[0], {R, C});
  if (b.op == "rope") {
    const int64_t h = C / 2;
    at::Tensor x = wrap(in[0], {R, C}), cos = wrap(in[1], {R, h}), sin = wrap(in[2], {R, h});
    at::Tensor lo = x.narrow(1, 0, h), hi = x.narrow(1, h, h);
    at::Tensor y_lo = y.narrow(1, 0, h), y_hi = y.narrow(1, h, h);
    // Four out= ops on column views, no temporaries: measured faster than
    // six mul/sub/add_out through temporaries.
    return {[=]() mutable {
      at::mul_out(y_lo, lo, cos);
      at::addcmul_out(y_lo, y_lo, hi, sin, -1); // y_lo - hi*sin
      at::mul_out(y_hi, lo, sin);
      at::addcmul_out(y_hi, y_hi, hi, cos);
    }};
  }
  if (b.op == "layernorm") {
    // The fastest user form, at::layer_norm, returns a fresh tensor (its
    // memory reused by the allocator call to call); it measured faster than
    // at::native_layer_norm_out. The copy into y happens after the timed
    // calls, so torch is timed doing only its own layer norm.
    at::Tensor x = wrap(in[0], {R, C}), g = wrap(in[1], {C}), beta = wrap(in[2], {C});
    auto result = std::make_shared<at::Tensor>();
    return {[=]() mutable { *result = at::layer_norm(x, {C}, g, beta, 1e-5); },
            [=]() mutable { y.copy_(*result); }};
  }
  if (b.op == "swiglu") {
    at::Tensor x = wrap(in[0], {R, C}), u = wrap(in[1], {R, C}), t = scratch({R, C});
    return {[=]() mutable {
      at::silu_out(t, x); // x / (1 + exp(-x)), vectorized
      at::mul_out(y, t, u);
    }};
  }
  if (b.op == "rmsnorm") {
    at::Tensor x = wrap(in[0], {R, C}), g = wrap(in[1], {C});
    at::Tensor sq = scratch({R, C}), ms = scratch({R, 1});
    return {[=]() mutable {
      at::mul_out(sq, x, x);
      at::mean_out(ms, sq, {1}, /*keepdim=*/true);
      ms.add_(1e-5).sqrt_();
      at::div_out(y, x, ms);
      y.mul_(g);
    }};
  }
  if (b.op == "gelu_residual") {
    at::Tensor x = wrap(in[0], {R, C}), u = wrap(in[1], {R, C});
    return {[=]() mutable {
      at::gelu_out(y, x, "tanh"); // 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))
      y.add_(u);
    }};
  }
  if (b.op == "masked_softmax") {
    at::Tensor x = wrap(in[0], {R, C}), t = scratch({R, C});
    // The causal-style mask, built once: column c is masked when c > r mod C.
    at::Tensor col = at::arange(C, at::kLong).unsqueeze(0);
    at::Tensor last = at::arange(R, at::kLong).remainder(C).unsqueeze(1);
    at::Tensor mask = (col > last).contiguous();
    at::Tensor minus_inf = at::full({}, -std::numeric_limits<float>::infinity());
    // where_out is masked_fill(mask, -inf) in one pass into a preallocated
    // tensor; measured faster than masked_fill_out or copy_ + masked_fill_.
    return {[=]() mutable {
      at::where_out(t, mask, minus_inf, x);
      at::softmax_out(y, t, 1);
    }};
  }
  throw Error(Error::Kind::Bind, "torch peer: no body for op '" + b.op + "'");
}

class TorchPeer : public Peer {
public:
  explicit TorchPeer(int threads = 1) : threads_(threads) {}
  std::string name() const override {
    return threads_ == 1 ? "torch" : "torch-t" + std::to_string(threads_);
  }
  std::unique_ptr<Peer> withThreads(int threads) const override {
    return std::make_unique<TorchPeer>(threads);
  }
  std::string description() const override {
    return "PyTorch eager, libtorch " + std::string(TORCH_VERSION) + " C++ API (ATen), " +
           std::to_string(threads_) +
           " thread(s) (at::set_num_threads), inference mode, caller buffers via at::from_blob; "
           "out= forms into the output or preallocated temporaries (rope: mul_out + addcmul_out "
           "per half, on column views; "
           "swiglu: silu_out, mul_out; rmsnorm: mul_out, mean_out, add_/sqrt_, div_out, mul_; "
           "gelu_residual: gelu_out(tanh), add_; masked_softmax: where_out(mask, -inf, x) with "
           "the mask built in prepare (masked_fill's effect, one pass), softmax_out); layernorm: "
           "at::layer_norm, its fresh result (memory reused by the allocator) copied into y "
           "after the timed calls, untimed (native_layer_norm_out computes then copies, and "
           "measured no faster). bf16 and f16 cases: the same ops on tensors of that type, as "
           "eager runs a model held in it; rmsnorm_q8: x and gamma widened to f32 by copy_ in "
           "those cases, then the rmsnorm ops, abs_out, amax_out, scale = amax/127, "
           "inv = 127/amax (0 where amax is 0), mul_out, round_ (half to even), "
           "clamp_(-127, 127), copy_ into the int8 q; rmsnorm_q8_0: the same on [R, C/32, 32] "
           "views, amax_out per block, scale = amax/127 copy_'d into the f16 scale. ATen CPU "
           "capability: " +
           capabilityLine();
  }
  bool supports(const std::string &op) const override {
    return op == "rope" || op == "layernorm" || op == "swiglu" || op == "rmsnorm" ||
           op == "gelu_residual" || op == "masked_softmax" || op == "rmsnorm_q8" ||
           op == "rmsnorm_q8_0";
  }
  bool runs(const std::string &op, const std::string &dtype) const override {
    return supports(op) && (dtype == "f32" || dtype == "bf16" || dtype == "f16");
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    initTorchOnce();
    c10::InferenceMode inference;
    return std::make_unique<TorchPrepared>(bodyFor(b), threads_);
  }

private:
  int threads_;
};

std::string capabilityLine() {
  initTorchOnce();
  const AtenChoice &c = chooseAtenCapability();
  std::string used = capabilityFromConfig(at::show_config());
  if (used.empty())
    used = "unknown";
  char ms[160];
  if (c.how == "user")
    return used + " (ATEN_CPU_CAPABILITY=" + c.detail + " set by the user)";
  if (c.how == "no avx512")
    return used + " (ATen's own choice; " + c.detail + ")";
  if (c.how != "probe")
    return used + " (ATen's own choice; probe failed: " + c.detail + ")";
  std::snprintf(ms, sizeof ms, "%.3f ms/call, avx512 (%s) %.3f ms/call", c.own_ms,
                c.avx512_name.c_str(), c.avx512_ms);
  std::string chose = c.set_avx512 ? "avx512" : "ATen's own";
  std::string summary = used + " (probe, SwiGLU 1024x4097: ATen's own choice " + c.own_name + " " +
                        ms + "; chose " + chose + ")";
  if (c.set_avx512 && used != c.avx512_name)
    summary += " WARNING: ATen was initialised before the choice was set";
  return summary;
}

} // namespace
} // namespace lanejit::bench

void lanejit_torch_peer_new(std::unique_ptr<lanejit::bench::Peer> *out) {
  *out = std::make_unique<lanejit::bench::TorchPeer>();
}

void lanejit_torch_aten_capability(std::string *out) {
  *out = lanejit::bench::capabilityLine();
}
