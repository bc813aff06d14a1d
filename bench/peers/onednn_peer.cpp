// The `onednn` peer: oneDNN 2.6's layer normalization primitive (forward
// inference, scale γ and shift β, eps 1e-5) on the caller's buffers, no
// copies. The primitive is created in prepare(), outside timing. LayerNorm
// only: oneDNN has no faithful primitive for the other five (its softmax
// cannot take our mask).
#include "peers/peer_factories.h"

#include <lanejit/error.h>

#include <dnnl.hpp>
#include <omp.h>

namespace lanejit::bench {
namespace {

class OneDnnPrepared : public PreparedPeer {
public:
  OneDnnPrepared(const CaseBuffers &b, int threads)
      : threads_(threads), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::dim R = b.rows, C = b.cols;
    dnnl::memory::desc data({R, C}, dt::f32, tag::ab), channel({C}, dt::f32, tag::a);
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data, 1e-5f,
                                                 flags);
    dnnl::layer_normalization_forward::primitive_desc pd(desc, engine_);
    primitive_ = dnnl::layer_normalization_forward(pd);
    auto mem = [&](const dnnl::memory::desc &d, const float *p) {
      return dnnl::memory(d, engine_, const_cast<float *>(p));
    };
    args_ = {{DNNL_ARG_SRC, mem(data, b.inputs[0])},
             {DNNL_ARG_SCALE, mem(channel, b.inputs[1])},
             {DNNL_ARG_SHIFT, mem(channel, b.inputs[2])},
             {DNNL_ARG_DST, mem(data, b.outputs[0])}};
  }
  void call() override {
    omp_set_num_threads(threads_); // per thread: repeat it on the timing thread (~ns)
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

private:
  int threads_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
};

class OneDnnPeer : public Peer {
public:
  explicit OneDnnPeer(int threads = 1) : threads_(threads) {}
  std::string name() const override {
    return threads_ == 1 ? "onednn" : "onednn-t" + std::to_string(threads_);
  }
  std::unique_ptr<Peer> withThreads(int threads) const override {
    return std::make_unique<OneDnnPeer>(threads);
  }
  std::string description() const override {
    return "oneDNN " + version() +
           " layer_normalization_forward (forward_inference, use_scale | use_shift, eps "
           "1e-5, f32 plain layout) on the caller's buffers; primitive created in prepare(); " +
           std::to_string(threads_) + " OpenMP thread(s); LayerNorm only";
  }
  bool supports(const std::string &op) const override { return op == "layernorm"; }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    // oneDNN here runs on OpenMP; the protocol is single-thread. This sets
    // the calling thread's team size before the primitive is created.
    omp_set_num_threads(threads_);
    try {
      return std::make_unique<OneDnnPrepared>(b, threads_);
    } catch (const dnnl::error &e) {
      throw Error(Error::Kind::Bind, "peer 'onednn': " + std::string(e.what()));
    }
  }

private:
  int threads_;
  static std::string version() {
    const dnnl_version_t *v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }
};

} // namespace

std::unique_ptr<Peer> makeOneDnnPeer() {
  return std::make_unique<OneDnnPeer>();
}

} // namespace lanejit::bench
