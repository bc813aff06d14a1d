// Binding variants to a case (bench/variants.h).
#include "variants.h"

#include <lanejit/aot.h>
#include <lanejit/dsl.h>
#include <lanejit/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

namespace lanejit::bench {
namespace {

bool hasFeature(const std::string &features, const std::string &feature) {
  return ("," + features + ",").find("," + feature + ",") != std::string::npos;
}

// The native entry with its argument block bound once.
class NativeRepeat : public Repeatable {
public:
  NativeRepeat(const Kernel &kernel, NativeEntry entry, check::Case &c) : entry_(entry) {
    for (auto *list : {&c.inputs, &c.outputs}) {
      for (check::GuardedBuffer &buffer : *list) {
        buffers_.push_back(buffer.raw());
        strides_.push_back(buffer.rowStride());
      }
    }
    // The workspace the kernel needs at this C (unfused variants keep
    // intermediates there), allocated and touched once, outside timing.
    int64_t floats = kernel.workspaceFloats(c.shape.cols);
    if (floats > 0) {
      workspace_ = check::GuardedBuffer(1, floats, floats);
      workspace_.fill(0);
    }
    args_ = LaunchArgs{buffers_.data(), strides_.data(), c.shape.rows, c.shape.cols,
                       floats > 0 ? workspace_.data() : nullptr};
  }
  void repeat(int64_t reps) override {
    for (int64_t i = 0; i < reps; ++i)
      entry_(&args_, 0, args_.rows);
  }
  bool guardsIntact() const override { return workspace_.guardsIntact(); }
  const LaunchArgs &args() const { return args_; }

private:
  NativeEntry entry_;
  std::vector<void *> buffers_;
  std::vector<int64_t> strides_;
  check::GuardedBuffer workspace_;
  LaunchArgs args_{};
};

// The default kernel's entry on the pool: rows split as Kernel::run splits
// them (the cost model decides how many threads the case is worth, at most
// `threads`); workers use workspaces of their own.
class ThreadedRepeat : public Repeatable {
public:
  ThreadedRepeat(const Kernel &kernel, check::Case &c, int threads)
      : kernel_(kernel), native_(kernel, kernel.nativeEntry(c.shape.rows, c.shape.cols), c),
        threads_(threads) {}
  void repeat(int64_t reps) override {
    for (int64_t i = 0; i < reps; ++i)
      kernel_.runEntry(native_.args(), threads_);
  }
  bool guardsIntact() const override { return native_.guardsIntact(); }

private:
  Kernel kernel_;
  NativeRepeat native_;
  int threads_;
};

// Kernel::run() on the case's buffers: what a C++ caller pays per call,
// the runtime's checks (remembered after the first call) included.
class RunRepeat : public Repeatable {
public:
  RunRepeat(const Kernel &kernel, check::Case &c)
      : kernel_(kernel), inputs_(c.inputRefs()), outputs_(c.outputRefs()) {}
  void repeat(int64_t reps) override {
    for (int64_t i = 0; i < reps; ++i)
      kernel_.run(inputs_, outputs_);
  }

private:
  Kernel kernel_;
  std::vector<BufferRef> inputs_, outputs_;
};

class PeerRepeat : public Repeatable {
public:
  explicit PeerRepeat(std::unique_ptr<PreparedPeer> peer) : peer_(std::move(peer)) {}
  void repeat(int64_t reps) override {
    for (int64_t i = 0; i < reps; ++i)
      peer_->call();
  }
  void finish() override { peer_->finish(); }

private:
  std::unique_ptr<PreparedPeer> peer_;
};

bool wanted(const std::vector<std::string> &only, const std::string &name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

BoundVariant bindLanejit(const CaseSpec &spec, check::Case &c, const LanejitConfig &config) {
  auto start = std::chrono::steady_clock::now();
  Kernel kernel = compile(spec.program, config.options);
  BoundVariant v;
  v.record.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  v.record.name = config.name;
  v.record.kind = "lanejit";
  v.record.description = config.description;
  v.record.options = config.options.key();
  // W asked for: options.lanes, or the widest of the target this kernel
  // was compiled for (its report names it), which need not be this machine.
  int lanes = config.options.lanes ? config.options.lanes : widestLanes(kernel.report().features);
  v.claims = claimsFor(config.options, spec.shape.cols, lanes);
  v.record.claims = checkClaims(v.claims, kernel.report());
  // The native entry checks nothing; one checked call through run() first
  // proves the shape and every column range fit these buffers.
  kernel.run(c.inputRefs(), c.outputRefs());
  // The entry run() uses at this shape (rows across lanes for narrow rows).
  NativeEntry entry = kernel.nativeEntry(spec.shape.rows, spec.shape.cols);
  if (config.aot) {
    // The same object the JIT linked, through `cc -shared` and the dynamic
    // loader; linked outside the bundle, which holds only evidence files.
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("lanejit-bench-aot-" + std::to_string(::getpid())) / spec.id;
    std::filesystem::create_directories(dir);
    entry = aot::linkShared(aot::build(kernel), dir.string());
  }
  if (config.threads > 1)
    v.callable = std::make_unique<ThreadedRepeat>(kernel, c, config.threads);
  else if (config.via_run)
    v.callable = std::make_unique<RunRepeat>(kernel, c);
  else
    v.callable = std::make_unique<NativeRepeat>(kernel, entry, c);
  v.kernel = kernel;
  return v;
}

} // namespace

int widestLanes(const std::string &features) {
  if (hasFeature(features, "+avx512f"))
    return 16;
  return hasFeature(features, "+avx") ? 8 : 4;
}

int widestLanes(const CompileOptions &options) {
  ProgramBuilder b("target_probe");
  b.output("y", b.rows("x") + 1.0f);
  return widestLanes(compile(b.build(), options).report().features);
}

std::vector<LanejitConfig> lanejitConfigs(const ProtocolSettings &protocol,
                                          const CompileOptions &base, bool aot, int threads) {
  int widest = base.lanes ? base.lanes : widestLanes(base);
  std::vector<LanejitConfig> configs;
  configs.push_back({"lanejit", fmt::format("lanejit native entry, default options (W={})", widest),
                     base, widest});
  configs.push_back({"lanejit-run",
                     "lanejit through Kernel::run() (checks, remembered last call, launch), "
                     "default options",
                     base, widest, false, true});
  // The native entry with switches turned off: each one's paired A/B.
  struct SwitchedOff {
    const char *name, *description;
    std::vector<bool CompileOptions::*> off;
  };
  const SwitchedOff switchedOff[] = {
      {"lanejit-nospec",
       "lanejit native entry, full-packet specialization off (every packet masked)",
       {&CompileOptions::specialize_full_packets}},
      {"lanejit-anycols",
       "lanejit native entry for every column count (specialize_columns off: no entry "
       "compiled for the call's C)",
       {&CompileOptions::specialize_columns}},
      {"lanejit-anycols-inline-rest",
       "lanejit-anycols with leftover_loop off: a row's leftover full packets as K-1 inlined "
       "bodies behind branches",
       {&CompileOptions::specialize_columns, &CompileOptions::leftover_loop}},
      {"lanejit-packet-local",
       "lanejit native entry, rows_across_lanes off: every C packet-local (one row over a "
       "packet's lanes)",
       {&CompileOptions::rows_across_lanes}},
      {"lanejit-noprefetch",
       "lanejit native entry, prefetch_next_row off (no prefetch of the next row in large calls)",
       {&CompileOptions::prefetch_next_row}},
      {"lanejit-unfused",
       "lanejit native entry, pointwise, reduction and output fusion off (every elementwise "
       "result through the workspace)",
       {&CompileOptions::fuse_pointwise, &CompileOptions::fuse_reductions,
        &CompileOptions::fuse_outputs}},
  };
  for (const SwitchedOff &v : switchedOff) {
    CompileOptions o = base;
    for (bool CompileOptions::*field : v.off)
      o.*field = false;
    configs.push_back({v.name, v.description, o, widest});
  }
  // The other LLVM pipeline (lean_llvm_pipeline flipped), for its paired A/B.
  CompileOptions pipeline = base;
  pipeline.lean_llvm_pipeline = !base.lean_llvm_pipeline;
  configs.push_back({pipeline.lean_llvm_pipeline ? "lanejit-lean-llvm" : "lanejit-o2-llvm",
                     pipeline.lean_llvm_pipeline
                         ? "lanejit native entry, lean LLVM pipeline (lean_llvm_pipeline on)"
                         : "lanejit native entry, LLVM's O2 pipeline (lean_llvm_pipeline off)",
                     pipeline, widest});
  if (aot || protocol.name == "seed")
    configs.push_back({"lanejit-aot",
                       "the default kernel's object linked ahead of time (cc -shared, dlopen): "
                       "the entry a program without LLVM would call",
                       base, widest, true});
  if (protocol.name == "seed" && widest > 8) {
    CompileOptions w8 = base;
    w8.lanes = 8;
    configs.push_back({"lanejit-w8", "lanejit native entry, W=8", w8, 8});
  }
  for (int t = 2; t <= threads; ++t) {
    CompileOptions on_pool = base;
    on_pool.threads = t;
    configs.push_back({fmt::format("lanejit-t{}", t),
                       fmt::format("the default kernel's entry on lanejit's pool, at most {} "
                                   "threads (Kernel::runEntry: the cost model may use fewer)",
                                   t),
                       on_pool, widest, false, t});
  }
  return configs;
}

std::vector<BoundVariant> bindVariants(const CaseSpec &spec, check::Case &c,
                                       const std::vector<LanejitConfig> &configs,
                                       const std::vector<std::unique_ptr<Peer>> &peers,
                                       const std::vector<std::string> &only) {
  std::vector<BoundVariant> variants;
  for (const LanejitConfig &config : configs)
    if (wanted(only, config.name))
      variants.push_back(bindLanejit(spec, c, config));
  if (spec.op.empty())
    return variants; // a user program: no peer knows it

  CaseBuffers buffers{spec.op, caseType(spec), spec.shape.rows, spec.shape.cols, {}, {}};
  for (check::GuardedBuffer &b : c.inputs)
    buffers.inputs.push_back(b.raw());
  for (check::GuardedBuffer &b : c.outputs)
    buffers.outputs.push_back(b.raw());
  for (const std::unique_ptr<Peer> &peer : peers) {
    if (!peer->runs(spec.op, buffers.dtype) || !wanted(only, peer->name()))
      continue;
    std::unique_ptr<PreparedPeer> prepared;
    try {
      prepared = peer->prepare(buffers);
    } catch (const PeerSkipped &why) {
      std::fprintf(stderr, "lanejit bench: %s skipped on %s: %s\n", peer->name().c_str(),
                   spec.id.c_str(), why.what());
      continue;
    }
    BoundVariant v;
    v.record.name = peer->name();
    v.record.kind = "peer";
    v.record.description = peer->description();
    if (std::string details = prepared->details(); !details.empty())
      v.record.description += "; " + details;
    v.objects = prepared->objects();
    v.callable = std::make_unique<PeerRepeat>(std::move(prepared));
    variants.push_back(std::move(v));
  }
  return variants;
}

} // namespace lanejit::bench
