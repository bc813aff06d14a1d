// Reading the text format back into a Program (grammar: docs/text-format.md).
//
// A hand-written recursive-descent parser over line-terminated statements.
// Nodes are built with the validating ir:: make functions, so a text can
// only describe what C++ could build; their errors, and the verifier's, are
// re-reported at the line of the statement that caused them. Recursion is
// bounded (Dim nesting, operand-chain depth) and every integer is range checked,
// so no input can crash or hang the parser.
#include <lanejit/error.h>
#include <lanejit/text.h>
#include <lanejit/verify.h>

#include "io/read_file.h"
#include "text/dim_reader.h"
#include "text/lexer.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>

namespace lanejit {
namespace {

using text::Lexer;
using text::Pos;
using text::Range;
using text::Tok;
using text::Token;

// Longest operand chain: later passes and the shared_ptr teardown of a node
// chain recurse once per level, so absurdly deep programs are refused here.
constexpr int kMaxValueDepth = 10000;

template <typename Op> std::optional<Op> opNamed(std::string_view text);

#define LANEJIT_MATCH_OP(Name, Text, ...)                                                          \
  if (text == Text)                                                                                \
    return Op::Name;
template <> std::optional<UnaryOp> opNamed<UnaryOp>(std::string_view text) {
  using Op = UnaryOp;
  LANEJIT_UNARY_OPS(LANEJIT_MATCH_OP)
  return std::nullopt;
}
template <> std::optional<BinaryOp> opNamed<BinaryOp>(std::string_view text) {
  using Op = BinaryOp;
  LANEJIT_BINARY_OPS(LANEJIT_MATCH_OP)
  return std::nullopt;
}
template <> std::optional<ReduceOp> opNamed<ReduceOp>(std::string_view text) {
  using Op = ReduceOp;
  LANEJIT_REDUCE_OPS(LANEJIT_MATCH_OP)
  return std::nullopt;
}
#undef LANEJIT_MATCH_OP

std::string reduceNames(const std::string &prefix = "reduce.") {
  std::string s;
#define LANEJIT_LIST_OP(Name, Text, ...) s += std::string(s.empty() ? "" : ", ") + prefix + Text;
  LANEJIT_REDUCE_OPS(LANEJIT_LIST_OP)
#undef LANEJIT_LIST_OP
  return s;
}

class Parser {
public:
  Parser(std::string_view text, std::string_view source) : lex_(text, source) {}
  Program run();

private:
  struct Value {
    Expr expr;
    Pos pos;
    int depth;
  };

  [[noreturn]] void fail(Pos pos, const std::string &message) const { lex_.fail(pos, message); }
  [[noreturn]] void unexpected(const Token &t, const std::string &what) const {
    lex_.unexpected(t, what);
  }
  Token expect(char punct, const std::string &context) { return lex_.expect(punct, context); }
  void skipNewlines();
  void endOfStatement();

  Token parseName(const std::string &what);
  DType parseType();
  void parseInput();
  void parseOutput();
  void parseNode();
  void parseWrite();
  void declare(const Token &name);

  Expr build(const Token &op, Pos stmt, std::vector<Value> &args);
  std::vector<Value> parseOperands(const Token &op, size_t count);
  int64_t parseGroupSize();
  std::pair<DType, double> parseConstant();

  void verifyProgram();

  Lexer lex_;
  Program program_;
  Pos programPos_;
  std::unordered_map<std::string, Pos> declared_; // inputs and outputs share names
  std::unordered_map<std::string, int> inputs_, outputs_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<const Node *, std::string> valueNames_;
  std::vector<Pos> writePos_;
};

void Parser::skipNewlines() {
  while (lex_.peek().kind == Tok::Newline)
    lex_.next();
}

void Parser::endOfStatement() {
  const Token &t = lex_.peek();
  if (t.kind == Tok::End)
    return; // the statement loop reports the missing '}'
  if (t.kind != Tok::Newline)
    unexpected(t, "end of line after the statement");
  lex_.next();
}

Program Parser::run() {
  skipNewlines();
  const Token &head = lex_.peek();
  if (head.kind == Tok::End)
    fail(head.pos, "empty input; expected 'program NAME {'");
  if (!head.isWord("program"))
    unexpected(head, "'program NAME {'");
  programPos_ = lex_.next().pos;
  program_.name = parseName("a program name").text;
  expect('{', "after the program name");
  endOfStatement();
  for (;;) {
    skipNewlines();
    const Token &t = lex_.peek();
    if (t.is('}'))
      break;
    if (t.kind == Tok::End)
      fail(t.pos, "unexpected end of input; expected '}' to close program " +
                      text::printName(program_.name) + " (opened at line " +
                      std::to_string(programPos_.line) + ")");
    if (t.isWord("in"))
      parseInput();
    else if (t.isWord("out"))
      parseOutput();
    else if (t.kind == Tok::Value)
      parseNode();
    else if (t.kind == Tok::Ident || t.kind == Tok::String)
      parseWrite();
    else
      unexpected(t, "a statement (in, out, %name = operation, or output[begin:end] = %value)");
    endOfStatement();
  }
  lex_.next(); // '}'
  skipNewlines();
  if (lex_.peek().kind != Tok::End)
    unexpected(lex_.peek(), "nothing after the program's closing '}'");
  verifyProgram();
  return std::move(program_);
}

Token Parser::parseName(const std::string &what) {
  const Token &t = lex_.peek();
  if (t.kind != Tok::Ident && t.kind != Tok::String)
    unexpected(t, what);
  return lex_.next();
}

DType Parser::parseType() {
  const Token &t = lex_.peek();
  for (DType type : {DType::F32, DType::I32, DType::Bool, DType::BF16, DType::F16, DType::I8})
    if (t.isWord(name(type))) {
      lex_.next();
      return type;
    }
  unexpected(t, "a type (f32, bf16, f16, i8, i32 or bool)");
}

void Parser::declare(const Token &name) {
  auto [it, fresh] = declared_.emplace(name.text, name.pos);
  if (!fresh)
    fail(name.pos, text::printName(name.text) + " is already declared at line " +
                       std::to_string(it->second.line));
}

// in NAME: TYPE              scalar
// in NAME: TYPE[cols]        column vector
// in NAME: TYPE[R, cols]     row tensor
void Parser::parseInput() {
  lex_.next(); // in
  Token nameTok = parseName("an input name");
  declare(nameTok);
  expect(':', "after the input name");
  Param p;
  p.name = nameTok.text;
  p.type = parseType();
  p.kind = ParamKind::Scalar;
  if (lex_.peek().is('[')) {
    lex_.next();
    p.kind = ParamKind::ColVector;
    if (lex_.peek().isWord("R")) {
      lex_.next();
      expect(',', "after 'R' (a row tensor is TYPE[R, cols])");
      p.kind = ParamKind::RowTensor;
    }
    p.cols = text::readDim(lex_);
    expect(']', "after the column count");
  }
  inputs_.emplace(p.name, static_cast<int>(program_.inputs.size()));
  program_.inputs.push_back(std::move(p));
}

// out NAME: TYPE[R, cols]
void Parser::parseOutput() {
  lex_.next(); // out
  Token nameTok = parseName("an output name");
  declare(nameTok);
  expect(':', "after the output name");
  Output o;
  o.name = nameTok.text;
  o.type = parseType();
  expect('[', "(an output is a row tensor TYPE[R, cols])");
  if (!lex_.peek().isWord("R"))
    unexpected(lex_.peek(), "'R' (an output is a row tensor TYPE[R, cols])");
  lex_.next();
  expect(',', "after 'R'");
  o.cols = text::readDim(lex_);
  expect(']', "after the column count");
  outputs_.emplace(o.name, static_cast<int>(program_.outputs.size()));
  program_.outputs.push_back(std::move(o));
}

// %name = operation
void Parser::parseNode() {
  Token target = lex_.next();
  if (auto it = values_.find(target.text); it != values_.end())
    fail(target.pos,
         target.text + " is already defined at line " + std::to_string(it->second.pos.line));
  expect('=', "after " + target.text);
  const Token &opPeek = lex_.peek();
  if (opPeek.kind != Tok::Ident)
    unexpected(opPeek, "an operation after '='");
  Token op = lex_.next();
  std::vector<Value> args;
  Expr e = build(op, target.pos, args);
  int depth = 1;
  for (const Value &a : args)
    depth = std::max(depth, a.depth + 1);
  if (depth > kMaxValueDepth)
    fail(target.pos, "operand chain deeper than " + std::to_string(kMaxValueDepth) + " operations");
  valueNames_.emplace(e.get(), target.text);
  values_.emplace(target.text, Value{std::move(e), target.pos, depth});
}

// Reads the operation's attributes and operands and makes the node; `args`
// receives the operands. Make-function errors are reported at `stmt`.
Expr Parser::build(const Token &op, Pos stmt, std::vector<Value> &args) {
  const std::string &w = op.text;
  auto make = [&](auto &&makeFn) -> Expr {
    try {
      return makeFn();
    } catch (const Error &e) {
      fail(stmt, e.what());
    }
  };
  if (w == "load") {
    Token input = parseName("an input name after 'load'");
    auto it = inputs_.find(input.text);
    if (it == inputs_.end())
      fail(input.pos,
           "unknown input " + text::printName(input.text) +
               (outputs_.count(input.text) ? " (it is an output; load reads inputs)" : ""));
    const Param &decl = program_.inputs[it->second];
    if (!lex_.peek().is('['))
      return make([&] { return ir::loadScalar(it->second, decl); });
    Range r = text::readRange(lex_);
    return make([&] { return ir::load(it->second, decl, r.begin, r.len); });
  }
  if (w == "const") {
    std::pair<DType, double> c = parseConstant();
    return make([&] { return ir::constant(c.first, c.second); });
  }
  if (w == "row")
    return make([] { return ir::rowIndex(); });
  if (w == "col") {
    Range r = text::readRange(lex_);
    return make([&] { return ir::colIndex(r.begin, r.len); });
  }
  if (w == "dim") {
    Dim d = text::readDim(lex_);
    return make([&] { return ir::dimValue(d); });
  }
  if (w == "slice") {
    args = parseOperands(op, 1);
    Range r = text::readRange(lex_);
    return make([&] { return ir::slice(args[0].expr, r.begin, r.len); });
  }
  if (w == "select" || w == "fma") {
    args = parseOperands(op, 3);
    return make([&] {
      return w == "fma" ? ir::fma(args[0].expr, args[1].expr, args[2].expr)
                        : ir::select(args[0].expr, args[1].expr, args[2].expr);
    });
  }
  if (auto u = opNamed<UnaryOp>(w)) {
    args = parseOperands(op, 1);
    return make([&] { return ir::unary(*u, args[0].expr); });
  }
  if (auto b = opNamed<BinaryOp>(w)) {
    args = parseOperands(op, 2);
    return make([&] { return ir::binary(*b, args[0].expr, args[1].expr); });
  }
  if (w.rfind("reduce.", 0) == 0) {
    auto r = opNamed<ReduceOp>(std::string_view(w).substr(7));
    if (!r)
      fail(op.pos, "unknown reduction '" + w + "' (expected " + reduceNames() + ")");
    args = parseOperands(op, 1);
    return make([&] { return ir::reduce(*r, args[0].expr); });
  }
  if (w == "reduce")
    fail(op.pos, "'reduce' needs a kind: " + reduceNames());
  if (w.rfind("group.", 0) == 0 || w == "repeat") {
    std::optional<ReduceOp> r;
    if (w != "repeat" && !(r = opNamed<ReduceOp>(std::string_view(w).substr(6))))
      fail(op.pos, "unknown group reduction '" + w + "' (expected " + reduceNames("group.") +
                       ")");
    args = parseOperands(op, 1);
    int64_t size = parseGroupSize();
    return make([&] {
      return r ? ir::group(*r, args[0].expr, size) : ir::repeat(args[0].expr, size);
    });
  }
  if (w == "group")
    fail(op.pos, "'group' needs a kind: " + reduceNames("group."));
  fail(op.pos, "unknown operation " + text::describe(op));
}

// `by` and a constant column count.
int64_t Parser::parseGroupSize() {
  const Token &by = lex_.peek();
  if (!by.isWord("by"))
    unexpected(by, "'by' and the columns per group, e.g. 'by 32'");
  lex_.next();
  Pos at = lex_.peek().pos;
  Dim size = text::readDim(lex_);
  if (!size.isConstant())
    fail(at, "the columns per group must be a constant, not " + size.str());
  return size.offset();
}

// `count` comma-separated %names; a wrong count is reported at the op.
std::vector<Parser::Value> Parser::parseOperands(const Token &op, size_t count) {
  auto wrongCount = [&](const std::string &found) {
    fail(op.pos, "'" + op.text + "' takes " + std::to_string(count) + " operand" +
                     (count == 1 ? "" : "s") + ", found " + found);
  };
  std::vector<Value> args;
  while (args.size() < count) {
    if (!args.empty()) {
      if (!lex_.peek().is(','))
        wrongCount(std::to_string(args.size()));
      lex_.next();
    }
    const Token &t = lex_.peek();
    if (t.kind != Tok::Value)
      unexpected(t, args.empty() ? "an operand (%name) after '" + op.text + "'"
                                 : std::string("an operand (%name) after ','"));
    auto it = values_.find(t.text);
    if (it == values_.end())
      fail(t.pos, t.text + " is not defined (values must be defined before they are used)");
    args.push_back(it->second);
    lex_.next();
  }
  if (lex_.peek().is(','))
    wrongCount("more");
  return args;
}

// const f32 ['-'] (number | inf) | nan ;  const i32 ['-'] integer ;  const bool true|false
std::pair<DType, double> Parser::parseConstant() {
  Pos at = lex_.peek().pos;
  DType type = parseType();
  if (isStorageOnly(type))
    fail(at, std::string(name(type)) +
                 " is a storage type of inputs and outputs; a constant is f32, i32 or bool");
  const Token &first = lex_.peek();
  if (type == DType::Bool) {
    if (!first.isWord("true") && !first.isWord("false"))
      unexpected(first, "true or false");
    return {type, lex_.next().text == "true" ? 1.0 : 0.0};
  }
  bool negative = first.is('-');
  if (negative)
    lex_.next();
  Token t = lex_.next();
  if (type == DType::I32) {
    if (t.kind != Tok::Integer)
      unexpected(t, "an i32 value (an integer)");
    int64_t magnitude = text::readInteger(lex_, t, int64_t{1} << 31, "i32 constant");
    if (!negative && magnitude > std::numeric_limits<int32_t>::max())
      fail(t.pos, "i32 constant " + t.text + " is too large (limit 2147483647)");
    return {type, static_cast<double>(negative ? -magnitude : magnitude)};
  }
  float f = 0;
  if (t.isWord("inf")) {
    f = std::numeric_limits<float>::infinity();
  } else if (t.isWord("nan") && !negative) {
    f = std::numeric_limits<float>::quiet_NaN();
  } else if (t.kind == Tok::Integer || t.kind == Tok::Float) {
    // from_chars rounds to the nearest float, so "0.1" means 0.1f.
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), f);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      fail(t.pos, "f32 constant " + text::describe(t) +
                      " is out of range (nonzero magnitudes run from 1e-45 to 3.4028235e+38)");
  } else {
    unexpected(t, "an f32 value (a number, inf, -inf or nan)");
  }
  return {type, negative ? -static_cast<double>(f) : static_cast<double>(f)};
}

// NAME[begin:end] = %value
void Parser::parseWrite() {
  Token target = lex_.next();
  auto it = outputs_.find(target.text);
  if (it == outputs_.end()) {
    if (inputs_.count(target.text))
      fail(target.pos, text::printName(target.text) + " is an input; only outputs are written");
    fail(target.pos, "unknown output " + text::printName(target.text) +
                         " (a statement is a declaration, %name = operation, or "
                         "output[begin:end] = %value)");
  }
  Range r = text::readRange(lex_);
  expect('=', "after the output's column range");
  const Token &v = lex_.peek();
  if (v.kind != Tok::Value)
    unexpected(v, "a value (%name) to write");
  auto value = values_.find(v.text);
  if (value == values_.end())
    fail(v.pos, v.text + " is not defined (values must be defined before they are used)");
  lex_.next();
  writePos_.push_back(target.pos);
  program_.writes.push_back(Write{it->second, r.begin, r.len, value->second.expr});
}

// Reports the verifier's first problem at the statement it is about. The
// verifier names nodes by their printed numbers (%N in forEachNode order),
// writes as "write #i" and declarations as "input 'x'" / "output 'y'"; node
// numbers are re-worded with this text's names.
void Parser::verifyProgram() {
  std::vector<std::string> problems = verify(program_);
  if (problems.empty())
    return;
  std::vector<const Node *> order;
  forEachNode(program_, [&](const Expr &x) { order.push_back(x.get()); });
  const std::string &problem = problems.front();
  std::string message;
  std::optional<Pos> where;
  auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
  auto number = [&](size_t &j) {
    uint64_t n = 0;
    for (size_t start = j; j < problem.size() && isDigit(problem[j]) && j - start < 12; ++j)
      n = n * 10 + (problem[j] - '0');
    return n;
  };
  for (size_t i = 0; i < problem.size();) {
    size_t j = i + 1;
    uint64_t n = problem[i] == '%' ? number(j) : 0;
    if (problem[i] == '%' && j > i + 1 && n < order.size()) {
      const std::string &source = valueNames_[order[n]];
      message += source;
      if (!where)
        where = values_[source].pos;
      i = j;
      continue;
    }
    message += problem[i++];
  }
  // "write #i: ..." or "writes #i ... and #j may overlap" (the later one).
  size_t w = problem.find("writes #");
  w = w == std::string::npos ? problem.find("write #") : problem.find(" and #", w);
  if (!where && w != std::string::npos) {
    size_t j = problem.find('#', w) + 1, start = j;
    uint64_t n = number(j);
    if (j > start && n < writePos_.size())
      where = writePos_[n];
  }
  for (const char *kind : {"input '", "output '"}) {
    size_t q = problem.find(kind);
    if (where || q == std::string::npos)
      continue;
    size_t start = q + std::char_traits<char>::length(kind);
    size_t end = problem.find('\'', start);
    auto it = end == std::string::npos ? declared_.end()
                                       : declared_.find(problem.substr(start, end - start));
    if (it != declared_.end())
      where = it->second;
  }
  if (problems.size() > 1)
    message += " (and " + std::to_string(problems.size() - 1) + " more problem" +
               (problems.size() > 2 ? "s" : "") + ")";
  fail(where.value_or(programPos_), message);
}

} // namespace

Program parse(std::string_view text, std::string_view source_name) {
  return Parser(text, source_name).run();
}

Program parseFile(const std::string &path) {
  return parse(io::readUserFile(path), path);
}

} // namespace lanejit
