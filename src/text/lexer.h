// Tokens of the text format (docs/text-format.md) and the naming rules the
// printer and parser share.
//
// Newlines are tokens: every statement ends at the end of its line, which
// keeps error positions precise. Comments (# to end of line) and blanks are
// skipped. The lexer throws Error(Kind::Parse) "source:line:col: message" on
// the first bad character; it never reads past the end of its input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lanejit::text {

struct Pos {
  int line = 1;
  int col = 1;
};

enum class Tok : uint8_t {
  Ident,   // [A-Za-z_][A-Za-z0-9_.]*  (names, keywords, ops such as reduce.sum)
  Value,   // %[A-Za-z0-9_.]+          (a node's name, text includes the %)
  Integer, // [0-9]+
  Float,   // [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)?  with a '.' or exponent
  String,  // "..." ; text is the decoded contents
  Punct,   // one of { } [ ] ( ) : , = + - * /
  Newline,
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::string text; // source spelling, except for String (decoded)
  Pos pos;

  bool is(char punct) const { return kind == Tok::Punct && text.size() == 1 && text[0] == punct; }
  bool isWord(std::string_view word) const { return kind == Tok::Ident && text == word; }
};

class Lexer {
public:
  Lexer(std::string_view input, std::string_view source) : in_(input), source_(source) {}

  // The next token without consuming it.
  const Token &peek();
  Token next();

  // Throws Error(Kind::Parse) "source:line:col: message".
  [[noreturn]] void fail(Pos pos, const std::string &message) const;
  // "expected <what> but found <token>" at the token.
  [[noreturn]] void unexpected(const Token &token, const std::string &what) const;
  // Consumes the punctuation `punct`, or fails with "expected 'punct' <context>".
  Token expect(char punct, const std::string &context);

private:
  Token scan();
  Token scanNumber(Token t);
  Token scanString(Token t);
  char at(size_t i) const { return i < in_.size() ? in_[i] : '\0'; }
  void advance(size_t n);

  std::string_view in_;
  std::string source_;
  size_t offset_ = 0;
  Pos pos_;
  Token peeked_;
  bool hasPeeked_ = false;
};

// How a token or character is quoted in messages: 'x', '\x07', end of input.
std::string describe(const Token &token);

// Whether `name` can be printed bare (an identifier that is not a keyword
// the parser could confuse it with); otherwise it is printed as a string.
bool isPlainName(std::string_view name);
// `name` bare when plain, else as a "..." string with \" \\ \xHH escapes.
std::string printName(std::string_view name);

} // namespace lanejit::text
