// Aliasing, for every library program, every W and the switches that
// change how a kernel reads and writes: outputs in place on an input, or
// overlapping it shifted by 1, W-1, W, half a row or a row (either way);
// column vectors inside the output; the same buffer passed as two inputs;
// in place with padded rows. Every call must give the oracle's answer on
// un-aliased copies of its inputs, the same bits as an un-aliased call, and
// leave every float that is not an output element alone
// (tests/support/aliased_call.h).
#include "support/aliased_call.h"

#include <lanejit/kernel.h>
#include <lanejit/library.h>

namespace lanejit {
namespace {

class Alias : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override { program_ = library::byName(GetParam()); }

  template <class Fn> void forEachKernel(Fn fn) { test::forEachAliasKernel(program_, fn); }

  // Several shapes per W: tails (C not a multiple of W), a multiple of every
  // W, and 2W+1; at least 3 rows so cross-row overlap shows. RoPE doubles C.
  std::vector<Shape> shapes(int64_t w) const {
    int64_t m = GetParam() == "rope" ? 2 : 1;
    if (m == 2)
      return {{5, 38}, {4, 66}, {3, 2 * (2 * w + 1)}};
    return {{5, 37}, {4, 64}, {3, 2 * w + 1}};
  }

  // "output = input + k" for the shifts docs/architecture.md lists.
  static std::vector<int64_t> shifts(int64_t w, int64_t c) {
    return {0, 1, -1, w - 1, -(w - 1), w, -w, c / 2, -(c / 2), c, -c};
  }

  Program program_;
};

// The output in place on, or shifted against, every input it can overlap
// as a row tensor. RoPE's cos/sin [R, C/2] are tried both dense and with
// the output's row stride (then offset 0 is "cos inside y's left half").
TEST_P(Alias, OutputOverlapsARowInput) {
  test::FailureLimit limit;
  forEachKernel([&](const Kernel &k, int64_t w) {
    for (Shape shape : shapes(w))
      for (size_t i = 0; i < program_.inputs.size(); ++i) {
        if (program_.inputs[i].kind != ParamKind::RowTensor)
          continue;
        test::Layout base = test::separateLayout(program_, shape);
        std::vector<int64_t> strides{base.inputs[i].stride};
        if (base.inputs[i].cols != shape.cols)
          strides.push_back(base.outputs[0].stride);
        for (int64_t stride : strides)
          for (int64_t shift : shifts(w, shape.cols)) {
            test::Layout l = base;
            l.inputs[i].stride = stride;
            l.outputs[0].at = l.inputs[i].at + shift;
            EXPECT_TRUE(limit(test::runAliased(k, l, 100 + shift)));
          }
      }
  });
}

// gamma/beta [C] inside the output: on row 0 in place, shifted partly out
// of it, and on later rows.
TEST_P(Alias, ColumnVectorInsideTheOutput) {
  test::FailureLimit limit;
  forEachKernel([&](const Kernel &k, int64_t w) {
    for (Shape shape : shapes(w))
      for (size_t i = 0; i < program_.inputs.size(); ++i) {
        if (program_.inputs[i].kind != ParamKind::ColVector)
          continue;
        test::Layout base = test::separateLayout(program_, shape);
        std::vector<int64_t> at = shifts(w, shape.cols);
        at.push_back(-2 * shape.cols);                // gamma = y row 2
        at.push_back(-(shape.rows - 1) * shape.cols); // gamma = y's last row
        for (int64_t shift : at) {
          test::Layout l = base;
          l.outputs[0].at = l.inputs[i].at + shift;
          EXPECT_TRUE(limit(test::runAliased(k, l, 200 + shift)));
        }
      }
  });
}

// Two inputs of the same declared shape given the same memory (SwiGLU and
// GELU x = u, RoPE cos = sin, LayerNorm gamma = beta), the output apart,
// then also in place on them and shifted.
TEST_P(Alias, SameBufferAsTwoInputs) {
  const Program &p = program_;
  int pairs = 0;
  test::FailureLimit limit;
  forEachKernel([&](const Kernel &k, int64_t w) {
    for (Shape shape : shapes(w))
      for (size_t i = 0; i < p.inputs.size(); ++i)
        for (size_t j = i + 1; j < p.inputs.size(); ++j) {
          if (p.inputs[i].kind != p.inputs[j].kind || !(p.inputs[i].cols == p.inputs[j].cols))
            continue;
          ++pairs;
          test::Layout base = test::separateLayout(p, shape);
          base.inputs[j] = base.inputs[i];
          EXPECT_TRUE(limit(test::runAliased(k, base, 300)));
          if (p.inputs[i].kind != ParamKind::RowTensor)
            continue;
          for (int64_t shift : {int64_t(0), int64_t(1), -w, shape.cols}) {
            test::Layout l = base;
            l.outputs[0].at = l.inputs[i].at + shift;
            EXPECT_TRUE(limit(test::runAliased(k, l, 301)));
          }
        }
  });
  if (p.name == "masked_softmax" || p.name == "rmsnorm")
    EXPECT_EQ(pairs, 0); // one input of each shape: nothing to pair
  else
    EXPECT_GT(pairs, 0) << "no pair of inputs with equal shapes found";
}

// In place with rows padded beyond C (the same stride for input and output):
// the padding must be neither read into the result nor written.
TEST_P(Alias, InPlaceWithPaddedRows) {
  test::FailureLimit limit;
  forEachKernel([&](const Kernel &k, int64_t w) {
    for (Shape shape : shapes(w))
      for (int64_t pad : {int64_t(1), int64_t(3), w})
        for (size_t i = 0; i < program_.inputs.size(); ++i) {
          if (program_.inputs[i].kind != ParamKind::RowTensor)
            continue;
          test::Layout l = test::separateLayout(program_, shape, pad);
          l.inputs[i].stride = l.outputs[0].stride; // RoPE: cos/sin inside y's rows
          l.outputs[0].at = l.inputs[i].at;
          EXPECT_TRUE(limit(test::runAliased(k, l, 400 + pad)));
          l.outputs[0].at = l.inputs[i].at + l.outputs[0].stride; // one padded row down
          EXPECT_TRUE(limit(test::runAliased(k, l, 500 + pad)));
        }
  });
}

INSTANTIATE_TEST_SUITE_P(AllOperators, Alias,
                         ::testing::Values("rope", "layernorm", "swiglu", "rmsnorm",
                                           "gelu_residual", "masked_softmax"),
                         [](const auto &info) { return info.param; });

} // namespace
} // namespace lanejit
