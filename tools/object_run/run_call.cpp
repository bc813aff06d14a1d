#include "run_call.h"

#include "jit/object_loader.h"
#include "launch/thread_pool.h"
#include "npy.h"

#include <lanejit/error.h>
#include <lanejit/launch_abi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>
#include <vector>

namespace lanejit::object_run {
namespace {

[[noreturn]] void fail(const Call &call, const std::string &why) {
  throw Error(Error::Kind::Io, "call '" + call.label + "' (manifest line " +
                                   std::to_string(call.line) + "): " + why);
}

size_t elementBytes(npy::Dtype d) {
  switch (d) {
  case npy::Dtype::F32:
    return 4;
  case npy::Dtype::I8:
    return 1;
  default:
    return 2; // f16, bf16 and its uint16/int16 spellings
  }
}

// Memory the kernel may assume nothing about but LANEJIT_WORKSPACE_ALIGN_
// BYTES alignment, as the host's run() gives it.
struct Aligned {
  std::unique_ptr<unsigned char, decltype(&std::free)> bytes{nullptr, &std::free};
  size_t size = 0;
  explicit Aligned(size_t n) : size(n) {
    size_t rounded = (std::max<size_t>(n, 1) + 63) / 64 * 64;
    bytes.reset(static_cast<unsigned char *>(std::aligned_alloc(64, rounded)));
    if (!bytes)
      throw Error(Error::Kind::Io, "out of memory for a buffer of " + std::to_string(n) + " bytes");
  }
};

// A buffer and the .npy array it came from (its dtype and shape are the
// result's).
struct Buffer {
  npy::Array array;
  Aligned memory;
  explicit Buffer(npy::Array a)
      : array(std::move(a)),
        memory(static_cast<size_t>(array.size()) * elementBytes(array.dtype)) {
    std::memcpy(memory.bytes.get(), array.raw(), memory.size);
  }
  void *data() const { return memory.bytes.get(); }
};

// A file of several rows holds a row tensor: one row of `stride` elements
// per row of the call (a C-order [rows, stride] array). A 0-D or 1-D file,
// or one row, is a column vector or a scalar: the kernel reads its first
// elements, which the program's shape decides.
void checkExtent(const Call &call, const std::string &path, const Buffer &b, int64_t stride) {
  const std::vector<int64_t> &shape = b.array.shape;
  if (stride < 0)
    fail(call, path + ": a negative row stride");
  if (shape.size() < 2 || shape[0] <= 1)
    return;
  int64_t row = b.array.size() / shape[0];
  if (row != stride || shape[0] < call.rows)
    fail(call, path + ": a file of " + std::to_string(shape[0]) + " rows of " +
                   std::to_string(row) + " elements for " + std::to_string(call.rows) +
                   " rows of stride " + std::to_string(stride));
}

// lanejit's own row split (launch/row_launch.cpp, less its cost model: the
// manifest's thread count is used whenever there are rows for it): blocks
// of `block_rows` rows, smaller when that leaves a thread without one,
// tasks of whole blocks, about 8 per thread, dealt out by the pool. The
// calling thread uses the call's workspace, each worker one of its own.
struct RowJob {
  NativeEntry entry;
  const LaunchArgs *args;
  int64_t workspace_floats;
  int64_t task_rows, block;
  std::thread::id caller;
};

thread_local std::vector<float> t_workspace;

float *alignedWorkspace(std::vector<float> &storage, int64_t floats) {
  storage.resize(static_cast<size_t>(floats) + 16);
  auto p = reinterpret_cast<uintptr_t>(storage.data());
  return reinterpret_cast<float *>((p + 63) & ~uintptr_t{63});
}

void runTask(void *ctx, int64_t task) noexcept {
  const RowJob &job = *static_cast<const RowJob *>(ctx);
  int64_t begin = task * job.task_rows;
  int64_t end = std::min(job.args->rows, begin + job.task_rows);
  LaunchArgs own = *job.args;
  if (std::this_thread::get_id() != job.caller && job.workspace_floats != 0)
    own.workspace = alignedWorkspace(t_workspace, job.workspace_floats);
  for (int64_t r = begin; r < end; r += job.block)
    job.entry(&own, r, std::min(end, r + job.block));
}

void launch(NativeEntry entry, const LaunchArgs &args, int64_t workspace_floats,
            int64_t block_rows, int threads) {
  int use = static_cast<int>(std::min<int64_t>(threads, args.rows));
  if (use <= 1) {
    for (int64_t r = 0; r < args.rows; r += block_rows)
      entry(&args, r, std::min(args.rows, r + block_rows));
    return;
  }
  constexpr int64_t kTasksPerThread = 8;
  int64_t block = std::max<int64_t>(1, std::min(block_rows, (args.rows + use - 1) / use));
  int64_t blocks = (args.rows + block - 1) / block;
  int64_t tasks = std::min(blocks, use * kTasksPerThread);
  int64_t task_rows = (blocks + tasks - 1) / tasks * block;
  RowJob job{entry, &args, workspace_floats, task_rows, block, std::this_thread::get_id()};
  launch::parallelFor((args.rows + task_rows - 1) / task_rows, use, runTask, &job);
}

std::string slurpObject(const Call &call) {
  std::ifstream in(call.object, std::ios::binary);
  if (!in)
    fail(call, "cannot read the object " + call.object);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

void runCall(const Call &call, LoadedKernels &loaded) {
  auto key = std::make_pair(call.object, call.entry);
  auto found = loaded.find(key);
  if (found == loaded.end()) {
    try {
      found = loaded.emplace(key, jit::loadObject(slurpObject(call), call.entry)).first;
    } catch (const Error &e) {
      fail(call, call.object + ": " + e.what());
    }
  }
  auto entry = reinterpret_cast<NativeEntry>(found->second.entry);

  std::vector<std::unique_ptr<Buffer>> inputs, outputs;
  std::vector<void *> pointers;
  std::vector<int64_t> strides;
  for (const InputSpec &s : call.inputs) {
    inputs.push_back(std::make_unique<Buffer>(npy::read(s.path, npy::Accept::Any)));
    checkExtent(call, s.path, *inputs.back(), s.stride);
    pointers.push_back(inputs.back()->data());
    strides.push_back(s.stride);
  }
  for (const OutputSpec &s : call.outputs) {
    if (s.alias >= 0) {
      outputs.push_back(nullptr);
      pointers.push_back(inputs[static_cast<size_t>(s.alias)]->data());
    } else {
      outputs.push_back(std::make_unique<Buffer>(npy::read(s.init, npy::Accept::Any)));
      checkExtent(call, s.init, *outputs.back(), s.stride);
      pointers.push_back(outputs.back()->data());
    }
    strides.push_back(s.stride);
  }

  // The caller's workspace, followed by a sentinel that shows an entry
  // writing past the floats it asked for.
  constexpr unsigned char kSentinel = 0xab;
  constexpr size_t kSentinelBytes = 64;
  size_t workspace_bytes = static_cast<size_t>(call.workspace_floats) * sizeof(float);
  Aligned workspace(workspace_bytes + kSentinelBytes);
  std::memset(workspace.bytes.get() + workspace_bytes, kSentinel, kSentinelBytes);
  LaunchArgs args{pointers.data(), strides.data(), call.rows, call.cols,
                  call.workspace_floats ? reinterpret_cast<float *>(workspace.bytes.get())
                                        : nullptr};
  launch(entry, args, call.workspace_floats, call.block_rows, call.threads);
  for (size_t i = 0; i < kSentinelBytes; ++i)
    if (workspace.bytes.get()[workspace_bytes + i] != kSentinel)
      fail(call, "the entry wrote past its " + std::to_string(call.workspace_floats) +
                     " workspace floats");

  for (size_t o = 0; o < call.outputs.size(); ++o) {
    const OutputSpec &s = call.outputs[o];
    Buffer &b = s.alias >= 0 ? *inputs[static_cast<size_t>(s.alias)] : *outputs[o];
    std::memcpy(b.array.raw(), b.data(), b.memory.size);
    npy::write(s.path, b.array);
  }
}

} // namespace lanejit::object_run
