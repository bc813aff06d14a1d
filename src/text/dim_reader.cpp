#include "text/dim_reader.h"

#include <optional>

namespace lanejit::text {
namespace {

using Wide = __int128;

Wide gcdWide(Wide x, Wide y) {
  x = x < 0 ? -x : x;
  y = y < 0 ? -y : y;
  while (y != 0) {
    Wide t = x % y;
    x = y;
    y = t;
  }
  return x;
}

// An exact (a*C + b)/d while an expression is read. Parts stay within
// kMaxDimPart between operations, so one operation's products fit easily in
// 128 bits; each result is reduced and then checked again.
struct Affine {
  Wide a = 0, b = 0, d = 1;
  bool constant() const { return a == 0; }
};

Affine add(const Affine &x, const Affine &y) {
  return {x.a * y.d + y.a * x.d, x.b * y.d + y.b * x.d, x.d * y.d};
}
Affine negate(const Affine &x) {
  return {-x.a, -x.b, x.d};
}

Dim toDim(const Affine &x) {
  return Dim::affine(static_cast<int64_t>(x.a), static_cast<int64_t>(x.b),
                     static_cast<int64_t>(x.d));
}

class DimReader {
public:
  explicit DimReader(Lexer &lex) : lex_(lex) {}

  Affine read() {
    Pos pos = lex_.peek().pos;
    return checked(sum(0), pos);
  }

  Affine checked(Affine x, Pos pos) const {
    if (x.d < 0)
      x = {-x.a, -x.b, -x.d};
    Wide g = gcdWide(gcdWide(x.a, x.b), x.d);
    if (g > 1)
      x = {x.a / g, x.b / g, x.d / g};
    for (Wide part : {x.a, x.b, x.d})
      if (part > kMaxDimPart || part < -kMaxDimPart)
        lex_.fail(pos, "Dim out of range (each part of (a*C+b)/d is limited to " +
                           std::to_string(kMaxDimPart) + " in magnitude)");
    return x;
  }

private:
  // sum := product (('+' | '-') product)*
  Affine sum(int depth) {
    Affine x = product(depth);
    while (lex_.peek().is('+') || lex_.peek().is('-')) {
      Token op = lex_.next();
      Affine y = product(depth);
      x = checked(add(x, op.text == "-" ? negate(y) : y), op.pos);
    }
    return x;
  }

  // product := factor (('*' | '/') factor)*, staying affine in C.
  Affine product(int depth) {
    Affine x = factor(depth);
    while (lex_.peek().is('*') || lex_.peek().is('/')) {
      Token op = lex_.next();
      Affine y = factor(depth);
      if (op.text == "*") {
        if (!x.constant() && !y.constant())
          lex_.fail(op.pos, "C*C is not affine: a Dim multiplies C only by constants");
        const Affine &k = x.constant() ? x : y, &v = x.constant() ? y : x;
        x = {v.a * k.b, v.b * k.b, v.d * k.d};
      } else {
        if (!y.constant())
          lex_.fail(op.pos, "dividing by an expression in C is not affine: a Dim divides "
                            "only by constants");
        if (y.b == 0)
          lex_.fail(op.pos, "division by zero in a Dim");
        x = {x.a * y.d, x.b * y.d, x.d * y.b};
      }
      x = checked(x, op.pos);
    }
    return x;
  }

  // factor := ['-'] (integer | 'C' | '(' sum ')')
  Affine factor(int depth) {
    bool negative = lex_.peek().is('-');
    if (negative)
      lex_.next();
    Token t = lex_.next();
    Affine x;
    if (t.kind == Tok::Integer) {
      x.b = readInteger(lex_, t, kMaxDimPart, "integer");
    } else if (t.isWord("C")) {
      x.a = 1;
    } else if (t.is('(')) {
      if (depth >= kMaxDimNesting)
        lex_.fail(t.pos,
                  "Dim nested deeper than " + std::to_string(kMaxDimNesting) + " parentheses");
      x = sum(depth + 1);
      lex_.expect(')', "to close the parenthesis");
    } else if (t.isWord("R")) {
      lex_.fail(t.pos, "'R' (the row count) appears only in row tensor types such as f32[R, C]");
    } else if (t.kind == Tok::Ident) {
      lex_.fail(t.pos, "unknown Dim symbol " + describe(t) + " (the only symbol is C)");
    } else if (t.kind == Tok::Float) {
      lex_.fail(t.pos, "Dims are exact: write a fraction such as 3/2, not " + describe(t));
    } else {
      lex_.unexpected(t, "a Dim (an integer, C or '(')");
    }
    return negative ? negate(x) : x;
  }

  Lexer &lex_;
};

} // namespace

Dim readDim(Lexer &lex) {
  return toDim(DimReader(lex).read());
}

Range readRange(Lexer &lex) {
  lex.expect('[', "to start a column range [begin:end]");
  DimReader reader(lex);
  Affine begin = reader.read();
  lex.expect(':', "between the range's begin and end");
  Pos endPos = lex.peek().pos;
  Affine end = reader.read();
  lex.expect(']', "to close the column range");
  Affine len = reader.checked(add(end, negate(begin)), endPos);
  return {toDim(begin), toDim(len)};
}

int64_t readInteger(const Lexer &lex, const Token &token, int64_t limit, const std::string &what) {
  int64_t v = 0;
  for (char c : token.text) {
    v = v * 10 + (c - '0');
    if (v > limit) {
      std::string shown = token.text.size() > 24 ? token.text.substr(0, 24) + "..." : token.text;
      lex.fail(token.pos,
               what + " " + shown + " is too large (limit " + std::to_string(limit) + ")");
    }
  }
  return v;
}

} // namespace lanejit::text
