// The process's worker threads: started once, on first demand, and kept.
//
// parallelFor(tasks, threads, fn, ctx) runs fn(ctx, i) for every i in
// [0, tasks) on the calling thread plus up to threads - 1 workers. Tasks
// are dealt round-robin (participant s starts with tasks s, s + n, ...) and
// a participant that runs out takes the others' unclaimed ones. It runs
// everything on the calling thread, waking nobody, when one thread is
// enough (threads <= 1 or
// tasks <= 1), when called from inside a task (a kernel run by a pool task:
// nesting would wait on workers that are busy with the outer call), and when
// another caller's call holds the pool (many caller threads at once: each
// extra caller works on its own thread instead of queueing, so nothing
// waits on anything and the process never runs more threads than callers +
// workers). Which thread runs a task never changes what it computes.
#pragma once

#include <cstdint>

namespace lanejit::launch {

// A task must not throw (the entry it runs cannot).
using TaskFn = void (*)(void *ctx, int64_t task) noexcept;

void parallelFor(int64_t tasks, int threads, TaskFn fn, void *ctx);

// The CPUs this process may run on (sched_getaffinity), at least 1.
int affinityThreads();

// Whether the calling thread is inside a parallelFor task (worker or caller).
bool insidePoolTask();

// For tests: workers started so far, and how many times any was woken.
struct PoolCounters {
  int workers = 0;
  uint64_t wakeups = 0;
};
PoolCounters poolCounters();

} // namespace lanejit::launch
