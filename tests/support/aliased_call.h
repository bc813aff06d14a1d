// tests/support/aliased_call.h — running a kernel on buffers that share one
// arena, placed at chosen offsets (in place, shifted, the same buffer twice).
//
//   test::Layout l = test::separateLayout(program, {5, 37});
//   l.outputs[0].at = l.inputs[0].at + 1; // y = x shifted by one float
//   EXPECT_TRUE(test::runAliased(kernel, l, /*seed=*/3));
//
// runAliased fills the inputs with seeded random data, takes un-aliased
// copies of what the kernel will read, runs the kernel on the aliased
// buffers and checks: every output within tolerance of the FP64 oracle on
// the copies, bit for bit equal to the same kernel run on the copies, and
// every arena float that is not an output element unchanged (inputs that
// are not overwritten, row padding, the room around the buffers).
// Header-only: only the alias tests use it.
#pragma once

#include "support/testing.h"

#include <lanejit/error.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace lanejit::test {

// Where one buffer lives: `at` floats from the arena's origin (negative is
// fine; the arena is shifted to fit), and its shape in elements.
struct Placed {
  int64_t at = 0;
  int64_t rows = 1, cols = 1, stride = 1;
  int64_t extent() const { return rows > 0 && cols > 0 ? (rows - 1) * stride + cols : 0; }
  bool overlaps(const Placed &o) const {
    return extent() && o.extent() && at < o.at + o.extent() && o.at < at + extent();
  }
};

struct Layout {
  Program program;
  Shape shape;
  std::vector<Placed> inputs, outputs;
};

inline std::ostream &operator<<(std::ostream &out, const Placed &p) {
  return out << "@" << p.at << " " << p.rows << "x" << p.cols << "/" << p.stride;
}

// "swiglu 5x37: x@249 5x37/37 u@498 5x37/37 y@250 5x37/37 (y=x+1)": each
// buffer at its offset with rows x cols / stride, then every overlap of an
// output with an input, relative to that input.
inline std::string describe(const Layout &l) {
  std::ostringstream s;
  s << l.program.name << " " << l.shape.rows << "x" << l.shape.cols << ":";
  for (size_t i = 0; i < l.inputs.size(); ++i)
    s << " " << l.program.inputs[i].name << l.inputs[i];
  for (size_t o = 0; o < l.outputs.size(); ++o)
    s << " " << l.program.outputs[o].name << l.outputs[o];
  for (size_t o = 0; o < l.outputs.size(); ++o)
    for (size_t i = 0; i < l.inputs.size(); ++i)
      if (l.outputs[o].overlaps(l.inputs[i])) {
        int64_t k = l.outputs[o].at - l.inputs[i].at;
        s << " (" << l.program.outputs[o].name << "=" << l.program.inputs[i].name
          << (k < 0 ? "" : "+") << k << ")";
      }
  return s.str();
}

// Every buffer dense (rows padded by `pad` floats) and far from the others:
// gaps larger than any buffer, so moving one buffer next to another by up
// to a whole buffer overlaps only those two.
inline Layout separateLayout(const Program &program, Shape shape, int64_t pad = 0) {
  check::Case c = check::makeCase(program, shape, check::Fill::Random, 1, pad);
  Layout l{program, shape, {}, {}};
  int64_t gap = 0;
  for (const auto *list : {&c.inputs, &c.outputs})
    for (const check::GuardedBuffer &b : *list)
      gap = std::max(gap, b.elements() + 64);
  int64_t at = 0;
  for (const check::GuardedBuffer &b : c.inputs)
    l.inputs.push_back({at += gap, b.rows(), b.cols(), b.rowStride()});
  for (const check::GuardedBuffer &b : c.outputs)
    l.outputs.push_back({at += gap, b.rows(), b.cols(), b.rowStride()});
  return l;
}

// Row-major [r, c] positions of a placed buffer's elements, in arena floats.
template <class Fn> void forEachElement(const Placed &p, int64_t shift, Fn fn) {
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t c = 0; c < p.cols; ++c)
      fn(r, c, shift + p.at + r * p.stride + c);
}

inline BufferRef refInto(std::vector<float> &arena, const Placed &p, int64_t shift) {
  return BufferRef::matrix(arena.data() + shift + p.at, p.rows, p.cols, p.stride);
}

// The kernels the alias tests run: each W, with the defaults and with each
// switch that changes how a kernel reads and writes turned off. fn(kernel,
// W) runs under a trace naming the configuration.
template <class Fn> void forEachAliasKernel(const Program &program, Fn fn) {
  using Set = void (*)(CompileOptions &);
  static const std::pair<const char *, Set> variants[] = {
      {"defaults", [](CompileOptions &) {}},
      {"fuse_pointwise=off", [](CompileOptions &o) { o.fuse_pointwise = false; }},
      {"fuse_reductions=off", [](CompileOptions &o) { o.fuse_reductions = false; }},
      {"fuse_outputs=off", [](CompileOptions &o) { o.fuse_outputs = false; }},
      {"bound_masked_columns=off", [](CompileOptions &o) { o.bound_masked_columns = false; }},
      {"prove_in_place=off", [](CompileOptions &o) { o.prove_in_place = false; }},
      {"hoist_guards=off", [](CompileOptions &o) { o.hoist_guards = false; }},
      {"specialize_full_packets=off", [](CompileOptions &o) { o.specialize_full_packets = false; }},
      {"stream_stores at every size",
       [](CompileOptions &o) {
         o.stream_stores = true;
         o.stream_min_kib = 0;
       }},
      {"prefetch_next_row at every call size", [](CompileOptions &o) { o.prefetch_min_kib = 0; }},
      {"inline=never",
       [](CompileOptions &o) { o.inline_packet_bodies = CompileOptions::Inline::Never; }},
  };
  for (int lanes : {4, 8, 16})
    for (const auto &[name, set] : variants) {
      SCOPED_TRACE(::testing::Message() << "W=" << lanes << " " << name);
      CompileOptions o = targetOptions(); // explicit, but the environment's target
      o.lanes = lanes;
      set(o);
      fn(compile(program, o), static_cast<int64_t>(lanes));
    }
}

inline ::testing::AssertionResult runAliased(const Kernel &kernel, const Layout &l, uint64_t seed) {
  check::Case c = check::makeCase(l.program, l.shape, check::Fill::Random, seed);
  // The arena: room before and after every buffer, NaN everywhere else (a
  // kernel reading outside its buffers poisons its result).
  int64_t lo = 0, hi = 0;
  for (const auto *list : {&l.inputs, &l.outputs})
    for (const Placed &p : *list)
      lo = std::min(lo, p.at), hi = std::max(hi, p.at + p.extent());
  const int64_t room = 64, shift = room - lo;
  std::vector<float> arena(static_cast<size_t>(hi - lo + 2 * room),
                           std::numeric_limits<float>::quiet_NaN());
  // Inputs written in order, then read back: where inputs share memory,
  // the copies hold what the kernel will actually read.
  for (size_t i = 0; i < l.inputs.size(); ++i)
    forEachElement(l.inputs[i], shift,
                   [&](int64_t r, int64_t col, int64_t a) { arena[a] = c.inputs[i].at(r, col); });
  for (size_t i = 0; i < l.inputs.size(); ++i)
    forEachElement(l.inputs[i], shift,
                   [&](int64_t r, int64_t col, int64_t a) { c.inputs[i].at(r, col) = arena[a]; });
  const std::vector<float> before = arena;

  // The same kernel on the un-aliased copies gives the bits to expect.
  kernel.run(c.inputRefs(), c.outputRefs());
  std::vector<check::GuardedBuffer> unaliased = c.outputs;

  std::vector<BufferRef> ins, outs;
  for (const Placed &p : l.inputs)
    ins.push_back(refInto(arena, p, shift));
  for (const Placed &p : l.outputs)
    outs.push_back(refInto(arena, p, shift));
  try {
    kernel.run(ins, outs);
  } catch (const Error &e) {
    return ::testing::AssertionFailure() << describe(l) << ": run threw: " << e.what();
  }

  std::vector<char> written(arena.size(), 0);
  for (size_t o = 0; o < l.outputs.size(); ++o)
    forEachElement(l.outputs[o], shift, [&](int64_t r, int64_t col, int64_t a) {
      c.outputs[o].at(r, col) = arena[a];
      written[a] = 1;
    });
  for (size_t a = 0; a < arena.size(); ++a)
    if (!written[a] && std::memcmp(&arena[a], &before[a], sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << describe(l) << ": arena float " << static_cast<int64_t>(a) - shift
             << " (not an output element) changed from " << before[a] << " to " << arena[a];
  ::testing::AssertionResult oracle = matchesReference(c);
  if (!oracle)
    return ::testing::AssertionFailure() << describe(l) << ": " << oracle.message();
  for (size_t o = 0; o < l.outputs.size(); ++o)
    for (int64_t r = 0; r < l.outputs[o].rows; ++r)
      for (int64_t col = 0; col < l.outputs[o].cols; ++col) {
        float got = c.outputs[o].at(r, col), want = unaliased[o].at(r, col);
        if (std::memcmp(&got, &want, sizeof(float)) != 0)
          return ::testing::AssertionFailure()
                 << describe(l) << ": " << l.program.outputs[o].name << "[" << r << "," << col
                 << "] = " << got << " differs bitwise from the un-aliased run's " << want;
      }
  return ::testing::AssertionSuccess();
}

// Passes the first `shown` failures through and counts the rest, reported
// once when the test ends, so a broken kernel does not bury the log:
//   test::FailureLimit limit;
//   EXPECT_TRUE(limit(test::runAliased(k, l, seed)));
class FailureLimit {
public:
  explicit FailureLimit(int shown = 20) : shown_(shown) {}
  FailureLimit(const FailureLimit &) = delete;
  FailureLimit &operator=(const FailureLimit &) = delete;
  ~FailureLimit() {
    if (failed_ > shown_)
      ADD_FAILURE() << failed_ << " layouts failed; the " << failed_ - shown_ << " after the first "
                    << shown_ << " were not shown";
  }
  ::testing::AssertionResult operator()(::testing::AssertionResult result) {
    if (result || ++failed_ <= shown_)
      return result;
    return ::testing::AssertionSuccess();
  }

private:
  int shown_, failed_ = 0;
};

} // namespace lanejit::test
