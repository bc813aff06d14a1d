// GoogleTest helpers: running a kernel on a checked case and sweeping shapes.
#include "support/testing.h"

#include "support/output_bits.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>

#include <sstream>

namespace lanejit::test {

::testing::AssertionResult matchesReference(const check::Case &c) {
  check::Comparison result = check::compareWithReference(c);
  if (result.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << c.program.name << " at " << c.shape.rows << "x" << c.shape.cols << ": "
         << result.failures << " of " << result.checked << " elements out of tolerance; first "
         << result.first_failure << " (max abs error " << result.max_abs_error << ")";
}

::testing::AssertionResult runMatchesReference(const Kernel &kernel, check::Case &c) {
  std::vector<uint64_t> before;
  for (const check::GuardedBuffer &b : c.inputs)
    before.push_back(b.hash());
  kernel.run(c.inputRefs(), c.outputRefs());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].hash() != before[i])
      return ::testing::AssertionFailure() << "input '" << c.program.inputs[i].name << "' changed";
    if (!c.inputs[i].guardsIntact())
      return ::testing::AssertionFailure()
             << "guard zone of input '" << c.program.inputs[i].name << "' damaged";
  }
  for (size_t i = 0; i < c.outputs.size(); ++i)
    if (!c.outputs[i].guardsIntact())
      return ::testing::AssertionFailure()
             << "guard zone of output '" << c.program.outputs[i].name << "' damaged";
  return matchesReference(c);
}

::testing::AssertionResult compileAndCheck(const Program &program, Shape shape,
                                           const CompileOptions &options, check::Fill fill,
                                           uint64_t seed, int64_t row_stride_pad) {
  check::Case c = check::makeCase(program, shape, fill, seed, row_stride_pad);
  return runMatchesReference(compile(program, options), c);
}

::testing::AssertionResult sameBitsOnCase(const Kernel &a, const Kernel &b, const Program &program,
                                          Shape shape, int64_t row_stride_pad, uint64_t seed) {
  Outputs results[2];
  for (int k = 0; k < 2; ++k) {
    check::Case c = check::makeCase(program, shape, check::Fill::Random, seed, row_stride_pad);
    if (::testing::AssertionResult checked = runMatchesReference(k ? b : a, c); !checked)
      return checked << (k ? " (second kernel)" : " (first kernel)");
    results[k] = outputsOf(c);
  }
  return sameBits(results[0], results[1]);
}

::testing::AssertionResult sameBitsOverTails(const Kernel &a, const Kernel &b,
                                             const Program &program, int lanes, int64_t multiple,
                                             std::initializer_list<int64_t> pads, Shape longRows) {
  for (int64_t cols = 1; cols <= 2 * lanes + 1; ++cols)
    for (int64_t pad : pads)
      for (int64_t rows : {1, 3}) {
        Shape shape{rows, cols * multiple};
        uint64_t seed = static_cast<uint64_t>(cols * 7 + pad);
        if (::testing::AssertionResult same = sameBitsOnCase(a, b, program, shape, pad, seed);
            !same)
          return same << " at W=" << lanes << " " << rows << "x" << shape.cols << " pad " << pad;
      }
  if (::testing::AssertionResult same = sameBitsOnCase(a, b, program, longRows, 5, 9); !same)
    return same << " at " << longRows.rows << "x" << longRows.cols << " pad 5";
  return ::testing::AssertionSuccess();
}

Program writeAheadProgram() {
  ProgramBuilder b("write_ahead");
  Expr x = b.rows("x");
  Dim q = Dim::C() / 4, h = Dim::C() / 2;
  b.write("y", 0, x.cols(0, h) * 2.0f);
  b.write("y", h, x.cols(q, q + h) * 3.0f);
  return b.build();
}

Program writeBehindProgram() {
  ProgramBuilder b("write_behind");
  Expr x = b.rows("x");
  Dim q = Dim::C() / 4, h = Dim::C() / 2;
  b.write("y", 0, x.cols(q, q + h) * 2.0f, h);
  return b.build();
}

std::vector<int64_t> sweepColumns(int max_lanes, int64_t multiple) {
  std::vector<int64_t> cols;
  for (int64_t k = 1; k <= 2 * max_lanes + 1; ++k)
    cols.push_back(k * multiple);
  for (int64_t k : {4 * max_lanes + 1, 8 * max_lanes + 3})
    cols.push_back(k * multiple);
  return cols;
}

std::vector<Shape> sweepShapes(int max_lanes, int64_t multiple) {
  static constexpr int64_t kRows[] = {1, 2, 3, 5, 17};
  std::vector<Shape> shapes;
  size_t i = 0;
  for (int64_t cols : sweepColumns(max_lanes, multiple))
    shapes.push_back({kRows[i++ % std::size(kRows)], cols});
  return shapes;
}

CompileOptions targetOptions() {
  CompileOptions environment = CompileOptions::fromEnvironment();
  CompileOptions o;
  o.target_cpu = environment.target_cpu;
  o.target_features = environment.target_features;
  return o;
}

std::string verifyErrorOf(const std::function<void()> &make) {
  try {
    make();
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Verify);
    return e.what();
  }
  return "no error";
}

size_t countOccurrences(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

} // namespace lanejit::test
