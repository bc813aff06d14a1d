// The parser: valid texts -> expected structure; malformed texts -> the
// expected message at the expected line:col; random mutations -> a program
// or a lanejit::Error, never anything else.
#include <lanejit/error.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

namespace lanejit {
namespace {

const Dim C = Dim::C();

// Lines 1-3 declare x:[R,C] and y:[R,C]; the statements start at line 4.
std::string withBody(const std::string &statements) {
  return "program p {\n  in x: f32[R, C]\n  out y: f32[R, C]\n" + statements + "}\n";
}

// The message of the Error that parse(text) throws, or "" if it parses.
std::string parseError(const std::string &text, Error::Kind *kind = nullptr) {
  try {
    parse(text);
  } catch (const Error &e) {
    if (kind)
      *kind = e.kind();
    return e.what();
  }
  return "";
}

// The node that `program` writes first.
const Node &written(const Program &program) {
  return *program.writes.at(0).value;
}

TEST(Parser, ReadsDeclarationsNodesAndWrites) {
  Program p = parse("# LayerNorm with a scalar epsilon\n"
                    "program layernorm {\n"
                    "  in x: f32[R, C]      # rows\n"
                    "  in gamma: f32[C]\n"
                    "  in eps: f32\n"
                    "  out y: f32[R, C]\n"
                    "\n"
                    "  %x = load x[0:C]\n"
                    "  %mean = reduce.mean %x\n"
                    "  %d = sub %x, %mean\n"
                    "  %sq = mul %d, %d\n"
                    "  %var = reduce.mean %sq\n"
                    "  %eps = load eps\n"
                    "  %inv = rsqrt %var\n"
                    "  %g = load gamma[0:C]\n"
                    "  %n = mul %d, %inv\n"
                    "  %out = fma %n, %g, %eps\n"
                    "  y[0:C] = %out\n"
                    "}\n");

  EXPECT_EQ(p.name, "layernorm");
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].name, "x");
  EXPECT_EQ(p.inputs[0].kind, ParamKind::RowTensor);
  EXPECT_EQ(p.inputs[1].kind, ParamKind::ColVector);
  EXPECT_EQ(p.inputs[1].cols, C);
  EXPECT_EQ(p.inputs[2].kind, ParamKind::Scalar);
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].name, "y");
  ASSERT_EQ(p.writes.size(), 1u);
  EXPECT_EQ(p.writes[0].output, 0);
  EXPECT_EQ(p.writes[0].begin, Dim(0));
  EXPECT_EQ(p.writes[0].len, C);
  const Node &fma = written(p);
  EXPECT_EQ(fma.kind, NodeKind::Fma);
  EXPECT_EQ(fma.args[2]->kind, NodeKind::Load);
  EXPECT_EQ(fma.args[2]->param, 2);
  EXPECT_TRUE(fma.args[2]->rowUniform());
  const Node &n = *fma.args[0];
  EXPECT_EQ(n.kind, NodeKind::Binary);
  EXPECT_EQ(n.binaryOp(), BinaryOp::Mul);
  EXPECT_EQ(n.args[1]->kind, NodeKind::Unary);
  EXPECT_EQ(n.args[1]->unaryOp(), UnaryOp::Rsqrt);
  EXPECT_EQ(n.args[1]->args[0]->reduceOp(), ReduceOp::Mean);
  // %d is one node used twice by %sq and once by %n.
  const Node &sq = *n.args[1]->args[0]->args[0];
  EXPECT_EQ(sq.args[0].get(), sq.args[1].get());
  EXPECT_EQ(sq.args[0].get(), n.args[0].get());
}

TEST(Parser, ReadsSlicesRangesAndIndexNodes) {
  Program p = parse("program rope_like {\n"
                    "  in x: f32[R, C]\n"
                    "  in cos: f32[R, C/2]\n"
                    "  out y: f32[R, C]\n"
                    "  %0 = load x[0:C]\n"
                    "  %1 = slice %0[C/2:C]\n"
                    "  %2 = load cos[0:C/2]\n"
                    "  %3 = mul %1, %2\n"
                    "  y[C/2:C] = %3\n"
                    "  %4 = col[0:C/2]\n"
                    "  %5 = row\n"
                    "  %6 = dim C/2\n"
                    "  %7 = add %5, %6\n"
                    "  %8 = lt %4, %7\n"
                    "  %9 = const f32 0\n"
                    "  %10 = select %8, %2, %9\n"
                    "  y[0:C/2] = %10\n"
                    "}\n");

  ASSERT_EQ(p.writes.size(), 2u);
  EXPECT_EQ(p.writes[0].begin, C / 2);
  EXPECT_EQ(p.writes[0].len, C / 2);
  const Node &mul = written(p);
  EXPECT_EQ(mul.args[0]->kind, NodeKind::Slice);
  EXPECT_EQ(mul.args[0]->begin, C / 2);
  EXPECT_EQ(mul.args[0]->len, C / 2);
  EXPECT_EQ(p.inputs[1].cols, C / 2);
  const Node &select = *p.writes[1].value;
  EXPECT_EQ(select.kind, NodeKind::Select);
  const Node &lt = *select.args[0];
  EXPECT_EQ(lt.args[0]->kind, NodeKind::ColIndex);
  EXPECT_EQ(lt.args[0]->len, C / 2);
  EXPECT_EQ(lt.args[1]->args[0]->kind, NodeKind::RowIndex);
  EXPECT_EQ(lt.args[1]->args[1]->kind, NodeKind::DimValue);
  EXPECT_EQ(lt.args[1]->args[1]->begin, C / 2);
}

TEST(Parser, DimExpressionsAreExactAffineValues) {
  struct Case {
    const char *text;
    Dim expected;
  };
  std::vector<Case> cases = {
      {"C", C},
      {"7", Dim(7)},
      {"C/2", C / 2},
      {"(C+1)/2", (C + 1) / 2},
      {"3*C/4+1", C * 3 / 4 + 1},
      {"C - 1", C - 1},
      {"-C+2*C", C},
      {"C*3/6", C / 2},
      {"2*(C/4)", C / 2},
      {"(1/2)*C", C / 2},
      {"C/2/2", C / 4},
      {"-(C-4)/2", Dim::affine(-1, 4, 2)},
      {"C/-2", Dim::affine(-1, 0, 2)},
      {"1/2", Dim::affine(0, 1, 2)},
      {"((((C))))", C},
      {"(2*C+1)/2 - C", Dim::affine(0, 1, 2)},
      {"2147483647*C", C * 2147483647},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    Program p =
        parse(withBody("  %0 = dim " + std::string(c.text) + "\n  %1 = tof32 %0\n  y[0:C] = %1\n"));
    EXPECT_EQ(written(p).args[0]->begin, c.expected);
  }
}

TEST(Parser, ConstantsReadToTheNearestValueOfTheirType) {
  struct Case {
    const char *text;
    double expected;
  };
  std::vector<Case> f32 = {
      {"0.1", static_cast<double>(0.1f)},
      {"1e-05", static_cast<double>(1e-5f)},
      {"1e-45", static_cast<double>(FLT_TRUE_MIN)},
      {"3.4028235e+38", static_cast<double>(FLT_MAX)},
      {"-3.4028235e+38", -static_cast<double>(FLT_MAX)},
      {"16777217", 16777216.0},
      {"inf", INFINITY},
      {"-inf", -INFINITY},
      {"2", 2.0},
  };
  for (const Case &c : f32) {
    SCOPED_TRACE(c.text);
    Program p = parse(withBody("  %0 = const f32 " + std::string(c.text) + "\n  y[0:C] = %0\n"));
    EXPECT_EQ(written(p).value, c.expected);
    EXPECT_EQ(written(p).type, DType::F32);
  }
  Program negZero = parse(withBody("  %0 = const f32 -0\n  y[0:C] = %0\n"));
  EXPECT_TRUE(std::signbit(written(negZero).value));
  Program nan = parse(withBody("  %0 = const f32 nan\n  y[0:C] = %0\n"));
  EXPECT_TRUE(std::isnan(written(nan).value));

  Program i32 = parse(withBody("  %0 = const i32 -2147483648\n  %1 = tof32 %0\n  y[0:C] = %1\n"));
  EXPECT_EQ(written(i32).args[0]->type, DType::I32);
  EXPECT_EQ(written(i32).args[0]->value, -2147483648.0);

  Program b = parse(withBody("  %t = const bool true\n  %f = const bool false\n"
                             "  %c = and %t, %f\n  %0 = const f32 1\n"
                             "  %1 = select %c, %0, %0\n  y[0:C] = %1\n"));
  const Node &andNode = *written(b).args[0];
  EXPECT_EQ(andNode.args[0]->value, 1.0);
  EXPECT_EQ(andNode.args[1]->value, 0.0);
  EXPECT_EQ(andNode.args[0]->type, DType::Bool);
}

TEST(Parser, LayoutIsFree) {
  // CRLF, tabs, comments everywhere, blank lines, declarations after nodes,
  // a value name reused only after its definition, quoted names.
  Program p = parse("\r\n# header\r\n\r\nprogram \"a \\\"b\\\"\\x41\"\t{ # open\r\n"
                    "\tin x: f32[R,C]\r\n"
                    "  %v.1 = load x[ 0 : C ]   # spaces inside ranges\r\n"
                    "\r\n"
                    "  out \"in\" : f32 [ R , C ]\r\n"
                    "  \"in\"[0:C] = %v.1\r\n"
                    "}   # done\r\n"
                    "# trailing comment");

  EXPECT_EQ(p.name, "a \"b\"A");
  EXPECT_EQ(p.outputs[0].name, "in");
  EXPECT_EQ(written(p).kind, NodeKind::Load);
}

TEST(Parser, RowUniformValuesBroadcastOverTheWrite) {
  Program p = parse(withBody("  %0 = load x[0:C]\n  %1 = reduce.max %0\n  y[0:C] = %1\n"));
  EXPECT_TRUE(written(p).rowUniform());
  EXPECT_EQ(p.writes[0].len, C);
}

struct Bad {
  std::string text;
  std::string message; // a substring of the message after "line:col: "
  int line;
  int col;
};

std::string deepParens(int depth) {
  return "program p {\n  in x: f32[" + std::string(depth, '(') + "C" + std::string(depth, ')') +
         "]\n}\n";
}

const std::vector<Bad> &corpus() {
  static const std::vector<Bad> bad = {
      {"", "empty input; expected 'program NAME {'", 1, 1},
      {"  \n# only a comment\n", "empty input", 3, 1},
      {"prog p {\n}\n", "expected 'program NAME {' but found 'prog'", 1, 1},
      {"program {\n}\n", "expected a program name but found '{'", 1, 9},
      {"program p\n}\n", "expected '{' after the program name but found end of line", 1, 10},
      {"program p {\n  in x: f32[R, C]\n",
       "unexpected end of input; expected '}' to close program p (opened at line 1)", 3, 1},
      {"program p { in x: f32 }\n", "expected end of line after the statement but found 'in'", 1,
       13},
      {"\x01\x02", "unexpected character '\\x01'", 1, 1},
      {"program p {\n  in x: f32[R, C]\n  in x: f32\n}\n", "x is already declared at line 2", 3, 6},
      {withBody("  %0 = load x[0:C]\n  %1 = frob %0\n"), "unknown operation 'frob'", 5, 8},
      {withBody("  %0 = load x[0:C]\n  %1 = add %0\n"), "'add' takes 2 operands, found 1", 5, 8},
      {withBody("  %0 = load x[0:C]\n  %1 = exp %0, %0\n"), "'exp' takes 1 operand, found more", 5,
       8},
      {withBody("  %0 = load x[0:C]\n  %1 = exp %7\n"), "%7 is not defined", 5, 12},
      {withBody("  %0 = load x[0:C]\n  %0 = exp %0\n"), "%0 is already defined at line 4", 5, 3},
      {withBody("  %0 = load x[0:C]\n  z[0:C] = %0\n"), "unknown output z", 5, 3},
      {withBody("  %0 = load x[0:C]\n  x[0:C] = %0\n"), "x is an input; only outputs are written",
       5, 3},
      {withBody("  %0 = load q[0:C]\n"), "unknown input q", 4, 13},
      {withBody("  %0 = load y[0:C]\n"), "unknown input y (it is an output; load reads inputs)", 4,
       13},
      {"program p {\n  in x: f32[R, C*C]\n}\n", "C*C is not affine", 2, 17},
      {"program p {\n  in x: f32[4/C]\n}\n", "dividing by an expression in C is not affine", 2, 14},
      {"program p {\n  in x: f32[C/0]\n}\n", "division by zero in a Dim", 2, 14},
      {"program p {\n  in x: f32[99999999999999999999999]\n}\n",
       "integer 99999999999999999999999 is too large (limit 2147483647)", 2, 13},
      {"program p {\n  in x: f32[65536*65536*C]\n}\n", "Dim out of range", 2, 18},
      {deepParens(65), "Dim nested deeper than 64 parentheses", 2, 77},
      {"program p {\n  in x: f32[N]\n}\n", "unknown Dim symbol 'N' (the only symbol is C)", 2, 13},
      {"program p {\n  in x: f32[R]\n}\n",
       "expected ',' after 'R' (a row tensor is TYPE[R, cols]) but found ']'", 2, 14},
      {withBody("  %0 = load x[0:R]\n"), "'R' (the row count) appears only in row tensor types", 4,
       17},
      {"program p {\n  in x: f64[R, C]\n}\n",
       "expected a type (f32, bf16, f16, i8, i32 or bool) but found 'f64'", 2, 9},
      {"program p {\n  out y: f32[R, C]\n  %0 = const bf16 1\n}\n",
       "bf16 is a storage type of inputs and outputs; a constant is f32, i32 or bool", 3, 14},
      {"program p {\n  out y: f32\n}\n",
       "expected '[' (an output is a row tensor TYPE[R, cols]) but found end of line", 2, 13},
      {withBody("  %0 = load x[0:C]\n  %1 = const i32 1\n  %2 = add %0, %1\n"),
       "add: operand types f32 and i32 differ", 6, 3},
      {withBody("  %0 = const f32 1e39\n"), "f32 constant '1e39' is out of range", 4, 18},
      {withBody("  %0 = const f32 1e-46\n"), "f32 constant '1e-46' is out of range", 4, 18},
      {withBody("  %0 = const i32 2147483648\n"), "i32 constant 2147483648 is too large", 4, 18},
      {withBody("  %0 = const i32 1.5\n"), "expected an i32 value (an integer) but found '1.5'", 4,
       18},
      {withBody("  %0 = const bool 1\n"), "expected true or false but found '1'", 4, 19},
      {withBody("  %0 = const f32 -nan\n"),
       "expected an f32 value (a number, inf, -inf or nan) but found 'nan'", 4, 19},
      {"program \"abc {\n}\n", "unterminated string", 1, 9},
      {"program \"a\\qb\" {\n}\n", "unknown escape in string", 1, 11},
      {withBody("  %0 = load x[0:C]\n  y[0:C/2] = %0\n"),
       "write #0 to output 'y': value has C columns, but the write covers C/2", 5, 3},
      {"program p {\n  in x: f32[R, C]\n  out y: f32[R, C]\n}\n",
       "output 'y': columns [0, C) are never written", 3, 7},
      {withBody("  %in = load x[0:C+1]\n  y[0:C] = %in\n"),
       "%in: load of input 'x' columns [0, C+1) may exceed its C columns", 4, 3},
      {withBody("  %0 = load x[0:C]\n  %1 = slice %0[0:C/2]\n  y[0:C] = %0\n  y[0:C/2] = %1\n"),
       "may overlap", 7, 3},
      {withBody("  %0 = load x[0:C]\n  y[0:C] = %0\n") + "extra\n",
       "expected nothing after the program's closing '}' but found 'extra'", 7, 1},
      {"program p {\n  in x: f32[R, 3C]\n}\n", "malformed number '3C' (write products as 3*C)", 2,
       16},
      {withBody("  %0 = load x[0:C]\n  %1 = reduce.mean %0\n  %2 = slice %1[0:1]\n"),
       "slice: operand is row-uniform and has no columns to slice", 6, 3},
      {withBody("  %0 = load x[0:C]\n  %1 = reduce.avg %0\n"),
       "unknown reduction 'reduce.avg' (expected reduce.sum, reduce.max, reduce.min, "
       "reduce.mean)",
       5, 8},
      {withBody("  % = row\n"), "expected a value name after '%'", 4, 3},
      {withBody("  %0 = load x[0:C]\n  %1 exp %0\n"), "expected '=' after %1 but found 'exp'", 5,
       6},
      {withBody("  %0 = load x[0:C\n"),
       "expected ']' to close the column range but found end of line", 4, 18},
      {"program p {\n  in x: f32[R, C\n}\n",
       "expected ']' after the column count but found end of line", 2, 17},
      {withBody("  %0 = load x\n"), "load: input 'x' is a row tensor; give a column range", 4, 3},
      {withBody("  %0 = load x[0:C]\n  %1 = exp %0\n  y[0:C] = %1 %0\n"),
       "expected end of line after the statement but found '%0'", 6, 15},
      {withBody("  %0 = load x[0:C]\n  y[0:C] = x\n"),
       "expected a value (%name) to write but found 'x'", 5, 12},
      {withBody("  %0 = row %0\n"), "expected end of line after the statement but found '%0'", 4,
       12},
      {"program p {\n  }\n}\n", "expected nothing after the program's closing '}' but found '}'", 3,
       1},
      {withBody("  = add\n"),
       "expected a statement (in, out, %name = operation, or output[begin:end] = %value) but "
       "found '='",
       4, 3},
      {withBody("  %0 = 1.5e\n"), "malformed number '1.5e'", 4, 8},
      {withBody("  %0 = reduce %0\n"), "'reduce' needs a kind: reduce.sum", 4, 8},
  };
  return bad;
}

TEST(Parser, MalformedInputsAreRejectedAtTheirLineAndColumn) {
  ASSERT_GE(corpus().size(), 25u);
  for (const Bad &b : corpus()) {
    SCOPED_TRACE(b.text);
    Error::Kind kind = Error::Kind::Io;
    std::string message = parseError(b.text, &kind);
    std::string where = "<input>:" + std::to_string(b.line) + ":" + std::to_string(b.col) + ": ";
    EXPECT_EQ(kind, Error::Kind::Parse);
    EXPECT_EQ(message.substr(0, where.size()), where) << message;
    EXPECT_NE(message.find(b.message), std::string::npos) << message;
  }
}

TEST(Parser, ErrorsNameTheSource) {
  std::string message;
  try {
    parse("program p {\n", "kernels/p.lj");
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("kernels/p.lj:2:1: unexpected end of input", 0), 0u) << message;
}

TEST(Parser, DeepNestingIsRefusedWithoutRecursingDeeply) {
  EXPECT_NE(parseError(deepParens(200000)).find("nested deeper than 64"), std::string::npos);

  std::string chain = "  %0 = load x[0:C]\n";
  for (int i = 1; i <= 10001; ++i)
    chain += "  %" + std::to_string(i) + " = neg %" + std::to_string(i - 1) + "\n";
  std::string message = parseError(withBody(chain + "  y[0:C] = %10001\n"));
  EXPECT_NE(message.find("<input>:10004:3: operand chain deeper than 10000"), std::string::npos)
      << message;
}

TEST(Parser, ChainsBelowTheDepthLimitParse) {
  std::string chain = "  %0 = load x[0:C]\n";
  for (int i = 1; i < 5000; ++i)
    chain += "  %" + std::to_string(i) + " = neg %" + std::to_string(i - 1) + "\n";
  Program p = parse(withBody(chain + "  y[0:C] = %4999\n"));
  EXPECT_EQ(written(p).unaryOp(), UnaryOp::Neg);
}

TEST(Parser, EveryByteValueIsHandled) {
  for (int c = 0; c < 256; ++c) {
    std::string text = withBody("  %0 = load x[0:C]\n  y[0:C] = %0\n");
    text[20] = static_cast<char>(c); // inside "in x: f32[R, C]"
    try {
      parse(text);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Parse);
    }
  }
}

TEST(Parser, RandomMutationsParseOrThrowError) {
  const std::string base = "# a program exercising most of the grammar\n"
                           "program fuzz {\n"
                           "  in x: f32[R, C]\n"
                           "  in half: f32[R, (C+1)/2]\n"
                           "  in g: f32[C]\n"
                           "  in s: f32\n"
                           "  out y: f32[R, C]\n"
                           "  out z: f32[R, (C+3)/2]\n"
                           "  %0 = load x[0:C]\n"
                           "  %1 = reduce.mean %0\n"
                           "  %2 = sub %0, %1\n"
                           "  %3 = load s\n"
                           "  %4 = const f32 1e-05\n"
                           "  %5 = fma %2, %3, %4\n"
                           "  %6 = col[0:C]\n"
                           "  %7 = row\n"
                           "  %8 = dim C/2\n"
                           "  %9 = mod %7, %8\n"
                           "  %10 = le %6, %9\n"
                           "  %11 = const f32 -inf\n"
                           "  %12 = select %10, %5, %11\n"
                           "  y[0:C] = %12\n"
                           "  %13 = load half[0:(C+1)/2]\n"
                           "  %14 = slice %13[0:C/2]\n"
                           "  %15 = exp %14\n"
                           "  z[0:C/2] = %15\n"
                           "  %16 = const f32 3.4028235e+38\n"
                           "  z[C/2:(C+3)/2] = %16\n"
                           "}\n";
  ASSERT_EQ(parseError(base), "");
  const std::vector<std::string> fragments = {"%0",
                                              "%99",
                                              "[",
                                              "]",
                                              "(",
                                              ")",
                                              ":",
                                              ",",
                                              "=",
                                              "C",
                                              "R",
                                              "*",
                                              "/",
                                              "-",
                                              "+",
                                              "\n",
                                              "}",
                                              "{",
                                              "load",
                                              "const",
                                              "f32",
                                              "i32",
                                              "bool",
                                              "inf",
                                              "nan",
                                              "99999999999",
                                              "\"",
                                              "#",
                                              "%",
                                              "reduce.",
                                              "in",
                                              "out",
                                              "y[0:C] = %5\n",
                                              std::string(1, '\0'),
                                              "\xff",
                                              "((((((((",
                                              "1e400"};
  std::mt19937 rng(20240517);
  int parsed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % (text.size() + 1);
      switch (rng() % 5) {
      case 0: // flip a byte
        if (at < text.size())
          text[at] = static_cast<char>(rng() % 256);
        break;
      case 1: // truncate
        text.resize(at);
        break;
      case 2: // delete a short run
        text.erase(at, rng() % 8);
        break;
      case 3: // insert a grammar fragment
        text.insert(at, fragments[rng() % fragments.size()]);
        break;
      case 4: // insert random bytes
        for (size_t n = rng() % 4 + 1; n > 0; --n)
          text.insert(text.begin() + at, static_cast<char>(rng() % 256));
        break;
      }
    }
    SCOPED_TRACE(text);
    try {
      Program p = parse(text);
      ++parsed;
      // Whatever parses is a program like any other: it round-trips.
      std::string printed = print(p);
      EXPECT_EQ(print(parse(printed)), printed);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Parse) << e.what();
    } catch (const std::exception &e) {
      ADD_FAILURE() << "parse threw a non-lanejit exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "parse threw a non-exception";
    }
  }
  EXPECT_GT(parsed, 0); // the mutations do not all break the program
}

TEST(Parser, ParseFileReadsAFileAndNamesIt) {
  std::string path = ::testing::TempDir() + "text_parser_test.lj";
  {
    std::ofstream out(path, std::ios::binary);
    out << withBody("  %0 = load x[0:C]\n  y[0:C] = %0\n");
  }
  EXPECT_EQ(parseFile(path).name, "p");
  {
    std::ofstream out(path, std::ios::binary);
    out << "program p {\n  in x: f64\n}\n";
  }
  std::string message;
  try {
    parseFile(path);
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind(path + ":2:9: ", 0), 0u) << message;
  std::remove(path.c_str());
}

TEST(Parser, ParseFileSaysWhyItCannotReadAFile) {
  // Before: a missing file and a directory. Expected: Io errors naming the
  // path and the reason.
  for (const auto &[path, reason] : {std::pair<std::string, std::string>{
                                         "/nonexistent/dir/file.lj", "No such file or directory"},
                                     {::testing::TempDir(), "it is a directory"}}) {
    Error::Kind kind = Error::Kind::Parse;
    std::string message;
    try {
      parseFile(path);
    } catch (const Error &e) {
      kind = e.kind();
      message = e.what();
    }
    EXPECT_EQ(kind, Error::Kind::Io);
    EXPECT_EQ(message, "cannot read '" + path + "': " + reason);
  }
}

} // namespace
} // namespace lanejit
