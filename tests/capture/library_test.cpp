// The six library operators: each verifies, declares what docs/library.md
// says, and is built from the ops its formula names.
#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/verify.h>

#include <gtest/gtest.h>

#include <cmath>

#include <limits>

namespace lanejit {
namespace {

const Dim C = Dim::C();
const double kInf = std::numeric_limits<double>::infinity();

struct Decl {
  std::string name;
  ParamKind kind;
  Dim cols;
  bool operator==(const Decl &) const = default;
};

std::vector<Decl> inputsOf(const Program &p) {
  std::vector<Decl> out;
  for (const Param &in : p.inputs)
    out.push_back({in.name, in.kind, in.cols});
  return out;
}

// Nodes of the program matching `pred`.
template <class Pred> int count(const Program &p, Pred pred) {
  int n = 0;
  forEachNode(p, [&](const Expr &e) { n += pred(*e) ? 1 : 0; });
  return n;
}

bool isReduce(const Node &n, ReduceOp op) {
  return n.kind == NodeKind::Reduce && n.reduceOp() == op;
}
bool isUnary(const Node &n, UnaryOp op) {
  return n.kind == NodeKind::Unary && n.unaryOp() == op;
}
bool isBinary(const Node &n, BinaryOp op) {
  return n.kind == NodeKind::Binary && n.binaryOp() == op;
}

void expectSingleOutputY(const Program &p) {
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].name, "y");
  EXPECT_EQ(p.outputs[0].type, DType::F32);
  EXPECT_EQ(p.outputs[0].cols, C);
}

TEST(Library, AllSixAreListedAndVerify) {
  std::vector<std::string> names;
  for (const library::Entry &e : library::all()) {
    names.push_back(e.name);
    Program p = e.make();
    EXPECT_EQ(p.name, e.name);
    EXPECT_EQ(verify(p), std::vector<std::string>{}) << e.name;
    expectSingleOutputY(p);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"rope", "layernorm", "swiglu", "rmsnorm",
                                             "gelu_residual", "masked_softmax"}));
}

TEST(Library, ByName) {
  EXPECT_EQ(library::byName("rmsnorm").hash(), library::rmsNorm().hash());
  try {
    library::byName("softmax");
    FAIL() << "expected an Error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Verify);
    EXPECT_EQ(std::string(e.what()),
              "unknown operator 'softmax'; known: rope, layernorm, swiglu, rmsnorm, gelu_residual, "
              "masked_softmax, quantize_q8, rmsnorm_q8, quantize_q8_0, rmsnorm_q8_0");
  }
}

TEST(Library, RopeWritesTwoHalves) {
  Program p = library::rope();
  EXPECT_EQ(inputsOf(p), (std::vector<Decl>{{"x", ParamKind::RowTensor, C},
                                            {"cos", ParamKind::RowTensor, C / 2},
                                            {"sin", ParamKind::RowTensor, C / 2}}));
  ASSERT_EQ(p.writes.size(), 2u);
  EXPECT_EQ(p.writes[0].begin, Dim(0));
  EXPECT_EQ(p.writes[0].len, C / 2);
  EXPECT_EQ(p.writes[1].begin, C / 2);
  EXPECT_EQ(p.writes[1].len, C / 2);
  // As the hand kernel: lo*cos - hi*sin as fma(lo, cos, -(hi*sin)), and
  // lo*sin + hi*cos as fma(lo, sin, hi*cos).
  ASSERT_EQ(p.writes[0].value->kind, NodeKind::Fma);
  EXPECT_TRUE(isUnary(*p.writes[0].value->args[2], UnaryOp::Neg));
  ASSERT_EQ(p.writes[1].value->kind, NodeKind::Fma);
  EXPECT_TRUE(isBinary(*p.writes[1].value->args[2], BinaryOp::Mul));
  EXPECT_EQ(count(p, [](const Node &n) { return n.kind == NodeKind::Slice; }), 2);
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Mul); }), 2);
}

TEST(Library, LayerNormIsCenteredTwoPassWithARowUniformInverse) {
  Program p = library::layerNorm();
  EXPECT_EQ(inputsOf(p), (std::vector<Decl>{{"x", ParamKind::RowTensor, C},
                                            {"gamma", ParamKind::ColVector, C},
                                            {"beta", ParamKind::ColVector, C}}));
  EXPECT_EQ(count(p, [](const Node &n) { return isReduce(n, ReduceOp::Mean); }), 2);
  // The only division is 1/sqrt(var + eps), once per row.
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Div); }), 1);
  EXPECT_EQ(count(p,
                  [](const Node &n) {
                    return isBinary(n, BinaryOp::Div) && n.rowUniform() &&
                           isUnary(*n.args[1], UnaryOp::Sqrt);
                  }),
            1);
  EXPECT_EQ(count(p,
                  [](const Node &n) {
                    return n.kind == NodeKind::Const && n.value == static_cast<double>(1e-5f);
                  }),
            1);
  // The output is fma(d * inv, gamma, beta), as the hand kernel computes it.
  ASSERT_EQ(p.writes[0].value->kind, NodeKind::Fma);
  EXPECT_TRUE(isBinary(*p.writes[0].value->args[0], BinaryOp::Mul));
}

TEST(Library, SwigluKeepsTheBriefsFormula) {
  Program p = library::swiglu();
  EXPECT_EQ(inputsOf(p),
            (std::vector<Decl>{{"x", ParamKind::RowTensor, C}, {"u", ParamKind::RowTensor, C}}));
  EXPECT_EQ(count(p, [](const Node &n) { return isUnary(n, UnaryOp::Sigmoid); }), 0);
  EXPECT_EQ(count(p, [](const Node &n) { return isUnary(n, UnaryOp::Exp); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return isUnary(n, UnaryOp::Neg); }), 1);
  EXPECT_EQ(p.writes[0].value->binaryOp(), BinaryOp::Mul);
  EXPECT_EQ(p.writes[0].value->args[0]->binaryOp(), BinaryOp::Div);
}

TEST(Library, RmsNormHasOneMeanAndARowUniformInverse) {
  Program p = library::rmsNorm();
  EXPECT_EQ(inputsOf(p), (std::vector<Decl>{{"x", ParamKind::RowTensor, C},
                                            {"gamma", ParamKind::ColVector, C}}));
  EXPECT_EQ(count(p, [](const Node &n) { return isReduce(n, ReduceOp::Mean); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Div) && n.rowUniform(); }),
            1);
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Div) && !n.rowUniform(); }),
            0);
}

TEST(Library, GeluResidualUsesTheBriefsConstants) {
  Program p = library::geluResidual();
  EXPECT_EQ(inputsOf(p),
            (std::vector<Decl>{{"x", ParamKind::RowTensor, C}, {"u", ParamKind::RowTensor, C}}));
  for (float c : {0.5f, 0.7978845608f, 0.044715f})
    EXPECT_EQ(count(p,
                    [&](const Node &n) {
                      return n.kind == NodeKind::Const && n.value == static_cast<double>(c);
                    }),
              1)
        << c;
  EXPECT_EQ(count(p, [](const Node &n) { return isUnary(n, UnaryOp::Tanh); }), 1);
  // x + 0.044715 x^3 and 0.5x(1 + tanh) are fmas, as in the hand kernel;
  // the residual add stays last.
  EXPECT_EQ(count(p, [](const Node &n) { return n.kind == NodeKind::Fma; }), 2);
  EXPECT_EQ(p.writes[0].value->binaryOp(), BinaryOp::Add);
  EXPECT_EQ(p.writes[0].value->args[0]->kind, NodeKind::Fma);
}

TEST(Library, MaskedSoftmaxMasksTheMaxTheSumAndTheOutput) {
  // select(valid, x, -inf) for the max, select(valid, e, -0.0) for the sum
  // (both the reductions' identities), select(valid, e/s, 0) for y.
  Program p = library::maskedSoftmax();
  EXPECT_EQ(inputsOf(p), (std::vector<Decl>{{"x", ParamKind::RowTensor, C}}));
  EXPECT_EQ(count(p, [](const Node &n) { return n.kind == NodeKind::Select; }), 3);
  EXPECT_EQ(count(p,
                  [](const Node &n) {
                    return n.kind == NodeKind::Const && n.value == 0 && std::signbit(n.value);
                  }),
            1);
  EXPECT_EQ(count(p, [](const Node &n) { return isReduce(n, ReduceOp::Max); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return isReduce(n, ReduceOp::Sum); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Mod); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return isBinary(n, BinaryOp::Le); }), 1);
  EXPECT_EQ(count(p, [](const Node &n) { return n.kind == NodeKind::Const && n.value == -kInf; }),
            1);
}

} // namespace
} // namespace lanejit
