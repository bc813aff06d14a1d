// Reading Dim expressions of the text format: integers, C, + - * / and
// parentheses, e.g. "C/2", "(C+1)/2", "3*C/4+1". The result must be
// rational-affine in C (C*C or 4/C are errors). Arithmetic is exact and
// overflow checked; nesting is capped, so no input recurses deeply.
#pragma once

#include <lanejit/dim.h>

#include "text/lexer.h"

#include <cstdint>
#include <limits>
#include <string>

namespace lanejit::text {

// Each part of a parsed Dim (a*C + b)/d stays within this magnitude, so that
// the Dim arithmetic of later passes cannot overflow int64.
constexpr int64_t kMaxDimPart = std::numeric_limits<int32_t>::max();
// Parenthesis nesting allowed in one Dim expression.
constexpr int kMaxDimNesting = 64;

struct Range {
  Dim begin;
  Dim len;
};

// dim := sum ; fails at the offending token.
Dim readDim(Lexer &lex);
// "[" dim ":" dim "]" -> begin and len = end - begin.
Range readRange(Lexer &lex);
// The value of an Integer token, failing with "<what> N is too large" above
// `limit`.
int64_t readInteger(const Lexer &lex, const Token &token, int64_t limit, const std::string &what);

} // namespace lanejit::text
