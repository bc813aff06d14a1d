#include "text/lexer.h"

#include <lanejit/error.h>

namespace lanejit::text {
namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c) || c == '.';
}
bool isPunct(char c) {
  return c != '\0' && std::string_view("{}[]():,=+-*/").find(c) != std::string_view::npos;
}

std::string hexByte(unsigned char c) {
  const char *digits = "0123456789abcdef";
  return std::string("\\x") + digits[c >> 4] + digits[c & 15];
}

// A character as a message shows it: printable ASCII as is, else \xHH.
std::string showChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f)
    return std::string(1, c);
  return hexByte(u);
}

int hexValue(char c) {
  if (isDigit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

void Lexer::fail(Pos pos, const std::string &message) const {
  throw Error(Error::Kind::Parse, source_ + ":" + std::to_string(pos.line) + ":" +
                                      std::to_string(pos.col) + ": " + message);
}

void Lexer::unexpected(const Token &token, const std::string &what) const {
  fail(token.pos, "expected " + what + " but found " + describe(token));
}

Token Lexer::expect(char punct, const std::string &context) {
  if (!peek().is(punct))
    unexpected(peek(), "'" + std::string(1, punct) + "' " + context);
  return next();
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && offset_ < in_.size(); ++i, ++offset_) {
    if (in_[offset_] == '\n') {
      ++pos_.line;
      pos_.col = 1;
    } else {
      ++pos_.col;
    }
  }
}

const Token &Lexer::peek() {
  if (!hasPeeked_) {
    peeked_ = scan();
    hasPeeked_ = true;
  }
  return peeked_;
}

Token Lexer::next() {
  peek();
  hasPeeked_ = false;
  return std::move(peeked_);
}

Token Lexer::scan() {
  // Blanks and comments; a comment runs to (not through) the newline.
  for (;;) {
    char c = at(offset_);
    if (offset_ < in_.size() && (c == ' ' || c == '\t' || c == '\r')) {
      advance(1);
    } else if (offset_ < in_.size() && c == '#') {
      while (offset_ < in_.size() && in_[offset_] != '\n')
        advance(1);
    } else {
      break;
    }
  }
  Token t;
  t.pos = pos_;
  if (offset_ >= in_.size())
    return t; // End
  size_t start = offset_;
  char c = in_[offset_];
  if (c == '\n') {
    advance(1);
    t.kind = Tok::Newline;
    t.text = "\n";
    return t;
  }
  if (isIdentStart(c)) {
    size_t end = start;
    while (end < in_.size() && isIdentChar(in_[end]))
      ++end;
    t.kind = Tok::Ident;
    t.text = std::string(in_.substr(start, end - start));
    advance(end - start);
    return t;
  }
  if (c == '%') {
    size_t end = start + 1;
    while (end < in_.size() && isIdentChar(in_[end]))
      ++end;
    if (end == start + 1)
      fail(pos_, "expected a value name after '%' (like %3 or %mean)");
    t.kind = Tok::Value;
    t.text = std::string(in_.substr(start, end - start));
    advance(end - start);
    return t;
  }
  if (isDigit(c))
    return scanNumber(std::move(t));
  if (c == '"')
    return scanString(std::move(t));
  if (isPunct(c)) {
    t.kind = Tok::Punct;
    t.text = std::string(1, c);
    advance(1);
    return t;
  }
  fail(pos_, "unexpected character '" + showChar(c) + "'");
}

// [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)? not followed by a name character.
Token Lexer::scanNumber(Token t) {
  size_t start = offset_, end = offset_;
  while (isDigit(at(end)))
    ++end;
  t.kind = Tok::Integer;
  if (at(end) == '.' && isDigit(at(end + 1))) {
    t.kind = Tok::Float;
    for (end += 1; isDigit(at(end));)
      ++end;
  }
  if (at(end) == 'e' || at(end) == 'E') {
    size_t e = end + 1;
    if (at(e) == '+' || at(e) == '-')
      ++e;
    if (isDigit(at(e))) {
      t.kind = Tok::Float;
      for (end = e; isDigit(at(end));)
        ++end;
    }
  }
  if (end < in_.size() && isIdentChar(in_[end])) {
    size_t bad = end;
    while (bad < in_.size() && isIdentChar(in_[bad]))
      ++bad;
    fail(pos_, "malformed number '" + std::string(in_.substr(start, bad - start)) +
                   "' (write products as 3*C)");
  }
  t.text = std::string(in_.substr(start, end - start));
  advance(end - start);
  return t;
}

// "..." on one line, with \" \\ and \xHH escapes; the token holds the bytes.
Token Lexer::scanString(Token t) {
  size_t start = offset_, i = offset_ + 1;
  for (;;) {
    if (i >= in_.size() || in_[i] == '\n')
      fail(t.pos, "unterminated string");
    char d = in_[i];
    if (d == '"')
      break;
    if (d != '\\') {
      t.text += d;
      ++i;
      continue;
    }
    char e = at(i + 1);
    if (i + 1 < in_.size() && (e == '"' || e == '\\')) {
      t.text += e;
      i += 2;
    } else if (e == 'x' && i + 3 < in_.size() && hexValue(in_[i + 2]) >= 0 &&
               hexValue(in_[i + 3]) >= 0) {
      t.text += static_cast<char>(hexValue(in_[i + 2]) * 16 + hexValue(in_[i + 3]));
      i += 4;
    } else {
      advance(i - start);
      fail(pos_, "unknown escape in string (use \\\" \\\\ or \\xHH)");
    }
  }
  t.kind = Tok::String;
  advance(i + 1 - start);
  return t;
}

std::string describe(const Token &token) {
  switch (token.kind) {
  case Tok::End: return "end of input";
  case Tok::Newline: return "end of line";
  case Tok::String: return "string " + printName(token.text);
  default: break;
  }
  std::string shown = token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text;
  return "'" + shown + "'";
}

bool isPlainName(std::string_view name) {
  if (name.empty() || !isIdentStart(name[0]))
    return false;
  for (char c : name)
    if (!isIdentChar(c))
      return false;
  // Statement keywords: a write to an output named "in" would read as a
  // declaration, so such names are quoted.
  return name != "in" && name != "out" && name != "program";
}

std::string printName(std::string_view name) {
  if (isPlainName(name))
    return std::string(name);
  std::string s = "\"";
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      s += std::string("\\") + c;
    else if (u >= 0x20 && u < 0x7f)
      s += c;
    else
      s += hexByte(u);
  }
  return s + "\"";
}

} // namespace lanejit::text
