// The `onednn` peer: oneDNN 2.6's layer normalization primitive (forward
// inference, scale γ and shift β, eps 1e-5) on the caller's buffers, f32 or
// bf16, no copies of the rows. The primitive is created in prepare(), outside timing. LayerNorm
// only: oneDNN has no faithful primitive for the other five (its softmax
// cannot take our mask).
#include "peers/peer_factories.h"

#include <lanejit/element_types.h>
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
    // bf16 data; oneDNN 2.x takes scale and shift in f32 only, so a bf16
    // case's gamma and beta are widened (exactly) once, here.
    bool bf16 = b.dtype == "bf16";
    dnnl::memory::desc data({R, C}, bf16 ? dt::bf16 : dt::f32, tag::ab);
    dnnl::memory::desc channel({C}, dt::f32, tag::a);
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data, 1e-5f,
                                                 flags);
    dnnl::layer_normalization_forward::primitive_desc pd(desc, engine_);
    primitive_ = dnnl::layer_normalization_forward(pd);
    auto mem = [&](const dnnl::memory::desc &d, const void *p) {
      return dnnl::memory(d, engine_, const_cast<void *>(p));
    };
    auto channelValues = [&](const void *p, std::vector<float> &widened) -> const void * {
      if (!bf16)
        return p;
      widened.resize(static_cast<size_t>(C));
      for (dnnl::memory::dim i = 0; i < C; ++i)
        widened[i] = readElement(p, DType::BF16, i);
      return widened.data();
    };
    args_ = {{DNNL_ARG_SRC, mem(data, b.inputs[0])},
             {DNNL_ARG_SCALE, mem(channel, channelValues(b.inputs[1], scale_))},
             {DNNL_ARG_SHIFT, mem(channel, channelValues(b.inputs[2], shift_))},
             {DNNL_ARG_DST, mem(data, b.outputs[0])}};
  }
  void call() override {
    omp_set_num_threads(threads_); // per thread: repeat it on the timing thread (~ns)
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

private:
  int threads_;
  std::vector<float> scale_, shift_; // a bf16 case's gamma and beta, widened
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
           "1e-5, f32 or bf16 plain layout; a bf16 case's gamma and beta widened to the f32 "
           "oneDNN requires, once) on the caller's buffers; primitive created in prepare(); " +
           std::to_string(threads_) + " OpenMP thread(s); LayerNorm only";
  }
  bool supports(const std::string &op) const override { return op == "layernorm"; }
  bool runs(const std::string &op, const std::string &dtype) const override {
    return supports(op) && (dtype == "f32" || dtype == "bf16");
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    // oneDNN here runs on OpenMP; the protocol is single-thread. This sets
    // the calling thread's team size before the primitive is created.
    omp_set_num_threads(threads_);
    try {
      return std::make_unique<OneDnnPrepared>(b, threads_);
    } catch (const dnnl::error &e) {
      if (b.dtype != "f32") // bf16 needs a CPU oneDNN has a bf16 implementation for
        throw PeerSkipped("oneDNN has no " + b.dtype + " layer normalization here: " +
                          std::string(e.what()));
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
