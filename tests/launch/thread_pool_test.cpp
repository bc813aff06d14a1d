// The pool's dealing of tasks (launch/thread_pool.cpp): every task runs
// exactly once whatever the task and thread counts; each participant starts
// with its own round-robin share (the caller is participant 0) and keeps it
// unless it falls behind, so a loop of calls keeps a block on one core; and
// the tasks of a participant that stalls are taken over by the others.
#include "launch/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lanejit::launch {
namespace {

// Waits (yielding) until `pred` holds, for at most 30 s so that a broken
// pool fails the test instead of hanging it. Not a timed assertion: any
// working pool gets there in microseconds.
template <typename Pred> bool waitFor(Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  for (int64_t tasks : {0, 1, 2, 3, 7, 64, 1000})
    for (int threads : {1, 2, 3, 8}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
      parallelFor(
          tasks, threads,
          [](void *ctx, int64_t task) noexcept {
            (*static_cast<std::vector<std::atomic<int>> *>(ctx))[task]++;
          },
          &runs);
      for (int64_t t = 0; t < tasks; ++t)
        ASSERT_EQ(runs[t].load(), 1) << "task " << t << " of " << tasks << ", threads " << threads;
    }
}

TEST(ThreadPool, ParticipantsRunTheirOwnShareWhenNobodyFallsBehind) {
  // Three threads, six tasks: the caller owns 0 and 3, worker A 1 and 4,
  // worker B 2 and 5. The waits order the claims so that with one shared
  // counter a worker would take task 3 (the next one free) while the
  // caller is still in task 0; dealt, each participant runs its own two.
  struct Ctx {
    std::atomic<bool> started[6] = {};
    std::atomic<bool> waits_ended{true};
    std::thread::id ran_on[6];
    void waitUntilStarted(std::initializer_list<int> tasks) {
      for (int t : tasks)
        if (!waitFor([&] { return started[t].load(); }))
          waits_ended = false;
    }
  } ctx;
  parallelFor(
      6, 3,
      [](void *p, int64_t task) noexcept {
        auto &c = *static_cast<Ctx *>(p);
        c.ran_on[task] = std::this_thread::get_id();
        c.started[task] = true;
        if (task < 3)
          c.waitUntilStarted({0, 1, 2}); // all three participants are in
        if (task == 0)
          c.waitUntilStarted({4, 5}); // the workers went on first
        if (task >= 4)
          c.waitUntilStarted({3}); // nobody is free to take task 3 early
      },
      &ctx);
  ASSERT_TRUE(ctx.waits_ended.load());
  EXPECT_EQ(ctx.ran_on[0], std::this_thread::get_id());
  EXPECT_EQ(ctx.ran_on[3], std::this_thread::get_id());
  EXPECT_EQ(ctx.ran_on[4], ctx.ran_on[1]);
  EXPECT_EQ(ctx.ran_on[5], ctx.ran_on[2]);
  EXPECT_NE(ctx.ran_on[1], ctx.ran_on[2]);
  EXPECT_NE(ctx.ran_on[1], std::this_thread::get_id());
}

TEST(ThreadPool, AStalledParticipantsTasksAreTakenOver) {
  // Two threads, eight tasks: the caller owns 0, 2, 4, 6. Task 0 (the
  // caller's first) holds the caller until the seven others are done, so
  // the worker must run its own 1, 3, 5, 7 and then the caller's 2, 4, 6.
  struct Ctx {
    std::atomic<int> done{0};
    std::atomic<bool> others_finished{false};
    std::thread::id ran_on[8];
  } ctx;
  parallelFor(
      8, 2,
      [](void *p, int64_t task) noexcept {
        auto &c = *static_cast<Ctx *>(p);
        c.ran_on[task] = std::this_thread::get_id();
        if (task == 0)
          c.others_finished = waitFor([&] { return c.done.load() == 7; });
        else
          c.done++;
      },
      &ctx);
  EXPECT_TRUE(ctx.others_finished.load());
  EXPECT_EQ(ctx.ran_on[0], std::this_thread::get_id());
  for (int t = 1; t < 8; ++t)
    EXPECT_NE(ctx.ran_on[t], std::this_thread::get_id()) << "task " << t;
}

} // namespace
} // namespace lanejit::launch
