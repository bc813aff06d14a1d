// Dispatch latency of lanejit's pool against OpenMP (README, Threads): the
// median of 15 batches of 20,000 empty parallel calls on 2 threads, and a
// busy loop split over 2 threads against 1. Not built by CMake (it needs
// -fopenmp); from the repository root:
//   g++ -O2 -std=c++20 -fopenmp -Isrc -Iinclude bench/pool_dispatch.cpp \
//       src/launch/thread_pool.cpp -o /tmp/pool_dispatch -pthread && /tmp/pool_dispatch
#include "launch/thread_pool.h"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <omp.h>
#include <vector>
using namespace std::chrono;
static std::atomic<long> sink;
static void empty(void *, int64_t) noexcept {}
// n iterations the compiler can neither drop nor sum in closed form (the
// serial lambda below inlines it with a constant t).
static void busy(void *p, int64_t t) noexcept {
  long n = *(long *)p;
  long s = 0;
  for (long i = 0; i < n; ++i) {
    s += i * (t + 1);
    asm volatile("" : "+r"(s));
  }
  sink += s;
}
template <class F> double med(F f, int reps) {
  std::vector<double> v;
  for (int k = 0; k < 15; ++k) {
    auto a = steady_clock::now();
    for (int i = 0; i < reps; ++i)
      f();
    v.push_back(duration<double, std::nano>(steady_clock::now() - a).count() / reps);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main() {
  int reps = 20000;
  printf("own pool, empty parallelFor(2 tasks, 2 threads): %.0f ns\n",
         med([] { lanejit::launch::parallelFor(2, 2, empty, nullptr); }, reps));
  printf("own pool, serial path (1 thread): %.1f ns\n",
         med([] { lanejit::launch::parallelFor(2, 1, empty, nullptr); }, reps));
  omp_set_num_threads(2);
  printf("OpenMP (libgomp) empty parallel region, 2 threads: %.0f ns\n",
         med(
             [] {
#pragma omp parallel
               { sink.fetch_add(0, std::memory_order_relaxed); }
             },
             reps));
  printf("OpenMP parallel for 2 iters: %.0f ns\n",
         med(
             [] {
#pragma omp parallel for
               for (int i = 0; i < 2; ++i)
                 sink.fetch_add(0, std::memory_order_relaxed);
             },
             reps));
  // smallest work worth splitting: work W total ns split 2 vs 1
  for (long n : {1000L, 3000L, 10000L, 30000L, 100000L}) {
    double one = med(
        [&] {
          busy(&n, 0);
          busy(&n, 1);
        },
        200);
    double two = med([&] { lanejit::launch::parallelFor(2, 2, busy, &n); }, 200);
    printf("work %8.0f ns serial, %8.0f ns on 2 threads (ratio %.2f)\n", one, two, two / one);
  }
}
