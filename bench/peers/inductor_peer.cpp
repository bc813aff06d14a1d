// The `inductor` peer: TorchInductor as shipped in the pinned torch,
// timed the way the seed timed it — Inductor's generated native kernel
// entries called from this process's own timer, with no Python and no
// wrapper allocation in the timed region.
//
// inductor_kernels.py (run once per bench run, in a child process with the
// build's Python) compiles each case's PyTorch reference with
// torch.compile(backend="inductor", dynamic=False, fullgraph=True), runs
// it, and writes a plan: the shared objects Inductor built (copied into the
// bundle), and the compiled call's sequence of `kernel` calls with their
// arguments (inputs, outputs, scratch buffers, integers). Here each
// object is loaded and the sequence replayed over the case's buffers, the
// scratch buffers allocated once in prepare(). Inductor's .so files carry a
// Python binding beside `kernel`: CPython's data symbols must resolve at
// load, so libpython is loaded (never initialised, never called), and
// torch's libraries for the SLEEF math the kernels call.
//
// inductor-tN: the kernels Inductor generates with torch.set_num_threads(N)
// (Inductor bakes the OpenMP thread count into the code).
#include "peers/peer_factories.h"

#include "child_process.h"

#include <lanejit/error.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <unistd.h>
#include <utility>

namespace lanejit::bench {
namespace fs = std::filesystem;
namespace {

// Calls a C function of N word-sized arguments (pointers or int64_t; the
// same registers on x86-64 and AArch64) through a table built at compile
// time: no allocation, one indirect call per kernel.
using Trampoline = void (*)(void *fn, const uintptr_t *args);
template <size_t> using Word = uintptr_t;
template <size_t... I> void callWith(void *fn, const uintptr_t *a, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(Word<I>...)>(fn)(a[I]...);
}
template <size_t N> void trampoline(void *fn, const uintptr_t *a) {
  callWith(fn, a, std::make_index_sequence<N>{});
}
constexpr size_t kMaxArgs = 32;
template <size_t... N> constexpr auto trampolines(std::index_sequence<N...>) {
  return std::array<Trampoline, sizeof...(N)>{&trampoline<N>...};
}
constexpr auto kTrampolines = trampolines(std::make_index_sequence<kMaxArgs + 1>{});

// The case's folder, as inductor_kernels.py names it.
std::string caseKey(const std::string &op, const std::string &dtype, int64_t rows, int64_t cols,
                    int threads) {
  return op + (dtype == "f32" ? "" : "-" + dtype) + "-" + std::to_string(rows) + "x" +
         std::to_string(cols) + "-t" + std::to_string(threads);
}

nlohmann::json readPlan(const fs::path &file) {
  std::ifstream in(file);
  if (!in)
    throw PeerSkipped("Inductor wrote no plan (" + file.string() + ")");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    throw PeerSkipped("Inductor's plan " + file.string() + " is not JSON: " + e.what());
  }
}

// dlopen with the reason on failure. Handles are never closed: a kernel
// may be prepared again, and unloading OpenMP users is unsafe.
void *openLibrary(const std::string &path, int flags) {
  static std::mutex mutex;
  static std::map<std::string, void *> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = opened.find(path); it != opened.end())
    return it->second;
  void *handle = dlopen(path.c_str(), flags);
  if (!handle) {
    const char *why = dlerror();
    throw PeerSkipped("cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  opened[path] = handle;
  return handle;
}

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};
using Scratch = std::unique_ptr<unsigned char, AlignedFree>;

class InductorPrepared : public PreparedPeer {
public:
  struct Call {
    Trampoline trampoline;
    void *fn;
    std::vector<uintptr_t> args;
  };
  InductorPrepared(std::vector<Call> calls, std::vector<Scratch> scratch, std::string details,
                   std::vector<CodeObject> objects)
      : calls_(std::move(calls)), scratch_(std::move(scratch)), details_(std::move(details)),
        objects_(std::move(objects)) {}
  void call() override {
    for (const Call &c : calls_)
      c.trampoline(c.fn, c.args.data());
  }
  std::string details() const override { return details_; }
  std::vector<CodeObject> objects() const override { return objects_; }

private:
  std::vector<Call> calls_;
  std::vector<Scratch> scratch_; // what calls_ point into
  std::string details_;
  std::vector<CodeObject> objects_;
};

// Shared by `inductor` and its inductor-tN siblings: where the kernels are
// built, which thread counts the run has, and the one child process that
// builds every case.
struct Builds {
  std::string python, script, unavailable;
  std::string aten_capability; // the user's ATEN_CPU_CAPABILITY, which Inductor reads
  std::mutex mutex;
  fs::path dir;         // empty until the first build
  bool own_dir = false; // a temporary directory, not the bundle's
  std::set<int> thread_counts{1};
  std::set<std::string> built; // case keys with a plan.json under dir

  ~Builds() {
    if (own_dir) {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  }

  // Builds (op, rows, cols) at every thread count not built yet, in one child.
  void build(const std::vector<RunPlan::Case> &cases, const fs::path &into) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!unavailable.empty())
      throw PeerSkipped(unavailable);
    if (dir.empty()) {
      if (!into.empty()) {
        dir = into;
      } else {
        std::string tmpl = (fs::temp_directory_path() / "lanejit-inductor-XXXXXX").string();
        if (!mkdtemp(tmpl.data()))
          throw Error(Error::Kind::Io, "inductor peer: cannot create a temporary directory");
        dir = tmpl;
        own_dir = true;
      }
    }
    std::vector<std::string> args{script, "--out", dir.string()};
    std::vector<std::string> keys;
    for (const RunPlan::Case &c : cases)
      for (int t : thread_counts) {
        std::string key = caseKey(c.op, c.dtype, c.rows, c.cols, t);
        if (built.count(key) || std::find(keys.begin(), keys.end(), key) != keys.end())
          continue;
        keys.push_back(key);
        args.push_back("--case");
        args.push_back(c.op + ":" + std::to_string(c.rows) + ":" + std::to_string(c.cols) + ":" +
                       std::to_string(t) + ":" + c.dtype);
      }
    if (keys.empty())
      return;
    std::fprintf(stderr, "inductor: compiling %zu case(s) with TorchInductor (%s)...\n",
                 keys.size(), python.c_str());
    std::vector<std::pair<std::string, std::string>> set;
    std::vector<std::string> unset;
    if (aten_capability.empty())
      unset.push_back("ATEN_CPU_CAPABILITY"); // the torch peer's probe may set it here
    else
      set.push_back({"ATEN_CPU_CAPABILITY", aten_capability});
    ChildRun run = runChild(python, args, set, unset);
    if (!run.exited_ok) {
      unavailable = "inductor_kernels.py failed (" + run.error + "); see its messages above";
      throw PeerSkipped(unavailable);
    }
    for (const std::string &key : keys)
      built.insert(key);
  }
};

class InductorPeer : public Peer {
public:
  InductorPeer(std::shared_ptr<Builds> builds, int threads)
      : builds_(std::move(builds)), threads_(threads) {}

  std::string name() const override {
    return threads_ == 1 ? "inductor" : "inductor-t" + std::to_string(threads_);
  }
  std::string description() const override {
    std::string capability = builds_->aten_capability.empty()
                                 ? "ATEN_CPU_CAPABILITY unset (Inductor's own ISA choice)"
                                 : "ATEN_CPU_CAPABILITY=" + builds_->aten_capability +
                                       " (the user's; Inductor follows it)";
    return "TorchInductor as shipped: torch.compile(backend='inductor', dynamic=False, "
           "fullgraph=True) of the operator's PyTorch reference (bench/peers/"
           "inductor_kernels.py), default configuration, compiled with torch.set_num_threads(" +
           std::to_string(threads_) +
           ") (the OpenMP thread count Inductor bakes into its kernels); the `kernel` entry of "
           "each shared object Inductor built, called in graph order by this timer (no Python, "
           "scratch buffers allocated once); " +
           capability;
  }
  bool supports(const std::string &op) const override {
    return op == "rope" || op == "layernorm" || op == "swiglu" || op == "rmsnorm" ||
           op == "gelu_residual" || op == "masked_softmax" || op == "rmsnorm_q8" ||
           op == "rmsnorm_q8_0";
  }
  bool runs(const std::string &op, const std::string &dtype) const override {
    return supports(op) && (dtype == "f32" || dtype == "bf16" || dtype == "f16");
  }
  std::unique_ptr<Peer> withThreads(int threads) const override {
    std::lock_guard<std::mutex> lock(builds_->mutex);
    builds_->thread_counts.insert(threads);
    return std::make_unique<InductorPeer>(builds_, threads);
  }
  void anticipate(const RunPlan &plan) override {
    std::vector<RunPlan::Case> mine;
    for (const RunPlan::Case &c : plan.cases)
      if (runs(c.op, c.dtype))
        mine.push_back(c);
    if (!mine.empty())
      builds_->build(mine, plan.dir / "inductor");
  }
  std::unique_ptr<PreparedPeer> prepare(const CaseBuffers &b) const override {
    requireRunnable(*this, b);
    builds_->build({{b.op, b.rows, b.cols, b.dtype}}, {});
    std::string key = caseKey(b.op, b.dtype, b.rows, b.cols, threads_);
    fs::path dir = builds_->dir / key;
    nlohmann::json plan = readPlan(dir / "plan.json");
    if (plan.contains("error"))
      throw PeerSkipped("Inductor cannot run " + key + ": " + plan["error"].get<std::string>());
    return bind(plan, dir, key, b);
  }

private:
  std::unique_ptr<PreparedPeer> bind(const nlohmann::json &plan, const fs::path &dir,
                                     const std::string &key, const CaseBuffers &b) const {
    for (const auto &lib : plan.at("libraries"))
      openLibrary(lib.get<std::string>(), RTLD_NOW | RTLD_GLOBAL);
    std::vector<void *> entries;
    std::vector<PreparedPeer::CodeObject> objects;
    std::string details = "kernels in graph order:";
    for (const auto &k : plan.at("kernels")) {
      fs::path so = dir / k.at("file").get<std::string>();
      void *handle = openLibrary(so.string(), RTLD_NOW | RTLD_LOCAL);
      void *fn = dlsym(handle, k.at("symbol").get<std::string>().c_str());
      if (!fn)
        throw PeerSkipped(so.string() + " has no symbol " + k.at("symbol").get<std::string>());
      entries.push_back(fn);
      objects.push_back({so, {k.at("symbol").get<std::string>()}});
      details += " " + k.at("name").get<std::string>() + " (" +
                 fs::relative(so, dir.parent_path().parent_path()).string() + ")";
    }
    std::vector<Scratch> scratch;
    for (const auto &buffer : plan.at("buffers")) {
      size_t bytes = buffer.at("bytes").get<size_t>();
      size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
      Scratch s(static_cast<unsigned char *>(std::aligned_alloc(64, rounded)));
      if (!s)
        throw Error(Error::Kind::Bind, "inductor peer: cannot allocate a scratch buffer");
      std::fill(s.get(), s.get() + rounded, 0); // touched once, here
      scratch.push_back(std::move(s));
    }
    std::vector<InductorPrepared::Call> calls;
    for (const auto &call : plan.at("calls")) {
      InductorPrepared::Call c;
      c.fn = entries.at(call.at("kernel").get<size_t>());
      for (const auto &arg : call.at("args")) {
        std::string kind = arg.at("kind");
        if (kind == "int") {
          c.args.push_back(static_cast<uintptr_t>(arg.at("value").get<int64_t>()));
          continue;
        }
        size_t index = arg.at("index").get<size_t>();
        size_t offset = arg.at("offset").get<size_t>();
        const unsigned char *base =
            kind == "input"    ? reinterpret_cast<const unsigned char *>(b.inputs.at(index))
            : kind == "output" ? reinterpret_cast<const unsigned char *>(b.outputs.at(index))
            : kind == "buffer" ? scratch.at(index).get()
                               : nullptr;
        if (!base)
          throw PeerSkipped(key + ": a kernel argument of kind '" + kind + "'");
        c.args.push_back(reinterpret_cast<uintptr_t>(base + offset));
      }
      if (c.args.size() > kMaxArgs)
        throw PeerSkipped(key + ": a kernel of " + std::to_string(c.args.size()) + " arguments");
      c.trampoline = kTrampolines[c.args.size()];
      calls.push_back(std::move(c));
    }
    const nlohmann::json &ind = plan.at("inductor");
    details += "; vector ISA " + ind.value("vec_isa", std::string("?")) + " (" +
               ind.value("vec_isa_flags", std::string()) + "), " +
               ind.value("compiler_version", std::string("?")) + ", math flags " +
               ind.value("math_flags", std::string("?")) + ", torch " +
               ind.value("torch", std::string("?")) +
               (plan.value("compiled_now", false) ? ", compiled in this run"
                                                  : ", from Inductor's cache") +
               "; command: " + ind.value("command", std::string("?"));
    return std::make_unique<InductorPrepared>(std::move(calls), std::move(scratch), details,
                                              std::move(objects));
  }

  std::shared_ptr<Builds> builds_;
  int threads_;
};

} // namespace

std::unique_ptr<Peer> makeInductorPeer(const std::string &python, const std::string &script) {
  auto builds = std::make_shared<Builds>();
  builds->python = python;
  builds->script = script;
  if (const char *c = std::getenv("ATEN_CPU_CAPABILITY"))
    builds->aten_capability = c;
  for (const std::string &path : {python, script})
    if (access(path.c_str(), R_OK) != 0) {
      std::fprintf(stderr, "lanejit: inductor peer unavailable: %s is missing\n", path.c_str());
      return nullptr;
    }
  return std::make_unique<InductorPeer>(std::move(builds), 1);
}

std::unique_ptr<Peer> makeInductorPeer() {
  return makeInductorPeer(LANEJIT_PEER_PYTHON, LANEJIT_INDUCTOR_SCRIPT);
}

} // namespace lanejit::bench
