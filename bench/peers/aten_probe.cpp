// lanejit_aten_probe: times eager SwiGLU (at::silu_out, at::mul_out into
// preallocated tensors) at 1024x4097 on one thread under whatever
// ATEN_CPU_CAPABILITY its parent set, and prints
//   ms_per_call=<median> capability=<what ATen reports using, e.g. "AVX2">
// The torch peer runs it per candidate capability (aten_capability.cpp),
// because a process cannot change its own capability once ATen has run.
#include "peers/aten_capability.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/Version.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

int main() {
  using Clock = std::chrono::steady_clock;
  at::set_num_threads(1);
  c10::InferenceMode inference;
  const int64_t rows = 1024, cols = 4097;
  at::Tensor i = at::arange(rows * cols, at::kFloat).view({rows, cols});
  at::Tensor x = (i * 0.173).sin() * 1.7, u = (i * 0.031).cos() * 0.9;
  at::Tensor t = at::zeros_like(x), y = at::zeros_like(x); // touched once, reused
  auto run = [&](int reps) {
    for (int r = 0; r < reps; ++r) {
      at::silu_out(t, x);
      at::mul_out(y, t, u);
    }
  };
  auto seconds = [](Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
  };
  for (Clock::time_point w = Clock::now(); seconds(w) < 0.05;) // warmup
    run(1);
  int reps = 1;
  for (Clock::time_point t0 = Clock::now(); run(reps), seconds(t0) < 0.02; t0 = Clock::now())
    reps *= 2;
  std::vector<double> per_call;
  for (int s = 0; s < 7; ++s) {
    Clock::time_point t0 = Clock::now();
    run(reps);
    per_call.push_back(seconds(t0) / reps);
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf("ms_per_call=%.6f capability=%s\n", per_call[3] * 1e3,
              lanejit::bench::capabilityFromConfig(at::show_config()).c_str());
  return 0;
}
