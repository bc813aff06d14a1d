// Kernel::bind and run()'s memory of its last call (runtime/binding.h).
#include "runtime/binding.h"

#include <cstring>
#include <vector>

namespace lanejit {
namespace {

bool sameRefs(const BufferRef *a, std::span<const BufferRef> b) {
  return b.empty() || std::memcmp(a, b.data(), b.size() * sizeof(BufferRef)) == 0;
}

// What a BoundCall owns: its argument arrays, workspace and copies, and the
// kernel's code.
struct BoundState {
  PreparedCall call;
  std::vector<float> workspace;
  std::vector<std::vector<float>> copies; // per staged input
  std::vector<const void *> sources;      // per staged input
  std::shared_ptr<const CompiledCode> code;
};

} // namespace

PreparedCall *LastCall::find(uint64_t kernel, std::span<const BufferRef> inputs,
                             std::span<const BufferRef> outputs) {
  if (kernel != kernel_ || inputs.size() != inputs_ || outputs.size() != outputs_ ||
      !sameRefs(refs_.data(), inputs) || !sameRefs(refs_.data() + inputs_, outputs))
    return nullptr;
  return &call_;
}

PreparedCall &LastCall::remember(uint64_t kernel, std::span<const BufferRef> inputs,
                                 std::span<const BufferRef> outputs, const PreparedCall &call) {
  kernel_ = kernel;
  inputs_ = inputs.size();
  outputs_ = outputs.size();
  std::copy(inputs.begin(), inputs.end(), refs_.begin());
  std::copy(outputs.begin(), outputs.end(), refs_.begin() + inputs_);
  call_ = call;
  return call_;
}

BoundCall Kernel::bind(std::span<const BufferRef> inputs,
                       std::span<const BufferRef> outputs) const {
  auto state = std::make_shared<BoundState>();
  state->call = prepareCall(*impl_, inputs, outputs);
  // A bound call is made to be called many times: its C's entry now.
  state->call.entry =
      entryFor(*impl_, state->call.shape.rows, state->call.shape.cols, /*now=*/true);
  state->code = impl_->code;
  PreparedCall &c = state->call;
  BoundCall bound;
  float *workspace = nullptr;
  if (c.workspace_floats) {
    constexpr uintptr_t align = LANEJIT_WORKSPACE_ALIGN_BYTES;
    state->workspace.resize(static_cast<size_t>(c.workspace_floats) + align / sizeof(float));
    auto p = reinterpret_cast<uintptr_t>(state->workspace.data());
    workspace = reinterpret_cast<float *>((p + align - 1) & ~(align - 1));
  }
  state->copies.resize(inputs.size());
  state->sources.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (c.staged >> i & 1) {
      state->sources[i] = c.buffers[i];
      state->copies[i].resize((c.staged_bytes[i] + sizeof(float) - 1) / sizeof(float));
      c.buffers[i] = state->copies[i].data();
      bound.staged_ = true;
    }
  bound.entry_ = c.entry;
  bound.args_ = {c.buffers.data(), c.strides.data(), c.shape.rows, c.shape.cols, workspace};
  bound.rows_ = c.shape.rows;
  bound.block_ = impl_->options.block_rows;
  bound.state_ = std::move(state);
  return bound;
}

void BoundCall::stage() const {
  auto *state = static_cast<BoundState *>(state_.get());
  const PreparedCall &c = state->call;
  for (size_t i = 0; i < state->copies.size(); ++i)
    if (c.staged >> i & 1)
      std::memcpy(state->copies[i].data(), state->sources[i], c.staged_bytes[i]);
}

} // namespace lanejit
