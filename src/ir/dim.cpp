#include <lanejit/dim.h>
#include <lanejit/error.h>

#include "hash.h"

#include <cstdint>
#include <numeric>

namespace lanejit {

Dim Dim::affine(int64_t a, int64_t b, int64_t d) {
  if (d < 0) {
    a = -a;
    b = -b;
    d = -d;
  }
  if (d == 0)
    d = 1; // callers never divide by zero; keep the value well defined
  int64_t g = std::gcd(std::gcd(a, b), d);
  if (g > 1) {
    a /= g;
    b /= g;
    d /= g;
  }
  return Dim(a, b, d);
}

std::optional<int64_t> Dim::evaluate(int64_t c) const {
  // C comes from a caller's buffer: a value out of int64_t range is no value.
  int64_t num = 0;
  if (__builtin_mul_overflow(a_, c, &num) || __builtin_add_overflow(num, b_, &num))
    return std::nullopt;
  if (num % d_ != 0)
    return std::nullopt;
  return num / d_;
}

std::optional<int64_t> Dim::solveFor(int64_t value) const {
  if (a_ == 0)
    return std::nullopt;
  int64_t num = 0;
  if (__builtin_mul_overflow(value, d_, &num) || __builtin_sub_overflow(num, b_, &num) ||
      (a_ == -1 && num == INT64_MIN))
    return std::nullopt;
  if (num % a_ != 0)
    return std::nullopt;
  return num / a_;
}

Dim operator+(const Dim &x, const Dim &y) {
  return Dim::affine(x.a_ * y.d_ + y.a_ * x.d_, x.b_ * y.d_ + y.b_ * x.d_, x.d_ * y.d_);
}
Dim operator-(const Dim &x, const Dim &y) { return x + y * -1; }
Dim operator*(const Dim &x, int64_t k) { return Dim::affine(x.a_ * k, x.b_ * k, x.d_); }
Dim operator/(const Dim &x, int64_t k) { return Dim::affine(x.a_, x.b_, x.d_ * k); }

std::string Dim::str() const {
  if (a_ == 0)
    return d_ == 1 ? std::to_string(b_) : std::to_string(b_) + "/" + std::to_string(d_);
  std::string s;
  if (a_ == 1)
    s = "C";
  else if (a_ == -1)
    s = "-C";
  else
    s = std::to_string(a_) + "*C";
  if (b_ > 0)
    s += "+" + std::to_string(b_);
  else if (b_ < 0)
    s += std::to_string(b_);
  if (d_ == 1)
    return s;
  if (b_ != 0)
    s = "(" + s + ")";
  return s + "/" + std::to_string(d_);
}

uint64_t Dim::hash() const {
  using detail::hashMix;
  return hashMix(hashMix(hashMix(0x1d, a_), b_), d_);
}

bool provablyLessEqual(const Dim &x, const Dim &y) {
  Dim diff = y - x;
  return diff.coeff() >= 0 && diff.offset() >= 0;
}

int64_t evaluateDim(const Dim &dim, int64_t c, std::string_view what) {
  std::optional<int64_t> v = dim.evaluate(c);
  if (v && *v >= 0)
    return *v;
  std::string where = " for C = " + std::to_string(c) + " (" + std::string(what) + ")";
  __int128 numerator = static_cast<__int128>(dim.coeff()) * c + dim.offset();
  if (!v && (numerator > INT64_MAX || numerator < INT64_MIN))
    throw Error(Error::Kind::Bind, dim.str() + " overflows a 64-bit integer" + where);
  if (!v)
    throw Error(Error::Kind::Bind, dim.str() + " is not an integer" + where);
  throw Error(Error::Kind::Bind, dim.str() + " is negative (" + std::to_string(*v) + ")" + where);
}

} // namespace lanejit
