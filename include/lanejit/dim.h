// lanejit/dim.h — column extents and offsets as exact functions of C.
//
// A row program is written for a symbolic column count C bound at call time.
// Extents and slice bounds are rational-affine in C: (a*C + b) / d, e.g. C,
// C/2, C-1, 3*C/4. Arithmetic on Dims is exact (rationals), so the compiler
// can prove facts such as "[0, C/2) and [C/2, C) are disjoint and cover
// [0, C)" without knowing C. At bind time every Dim must evaluate to a
// non-negative integer; otherwise the call is rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lanejit {

class Dim {
public:
  Dim() = default;                        // zero
  Dim(int64_t constant) : b_(constant) {} // NOLINT: implicit from integers
  static Dim C() { return Dim(1, 0, 1); }
  // (a*C + b) / d, normalised; d must be positive.
  static Dim affine(int64_t a, int64_t b, int64_t d);

  int64_t coeff() const { return a_; }
  int64_t offset() const { return b_; }
  int64_t denom() const { return d_; }
  bool isConstant() const { return a_ == 0; }

  // The value for a concrete C, or nullopt when it is not an integer (or
  // not an int64_t).
  std::optional<int64_t> evaluate(int64_t c) const;
  // The C that makes this Dim equal `value`, when there is exactly one (and
  // the arithmetic stays in int64_t).
  std::optional<int64_t> solveFor(int64_t value) const;

  friend Dim operator+(const Dim &x, const Dim &y);
  friend Dim operator-(const Dim &x, const Dim &y);
  friend Dim operator*(const Dim &x, int64_t k);
  friend Dim operator/(const Dim &x, int64_t k);
  friend bool operator==(const Dim &x, const Dim &y) = default;

  // Printed as the grammar reads it: "C", "C/2", "C-1", "(3*C+4)/4", "7".
  std::string str() const;
  uint64_t hash() const;

private:
  Dim(int64_t a, int64_t b, int64_t d) : a_(a), b_(b), d_(d) {}
  int64_t a_ = 0, b_ = 0, d_ = 1;
};

// Facts that hold for every C >= 0 at which both Dims are integers (the
// compiler uses them to prove slices in range and writes disjoint).
bool provablyLessEqual(const Dim &x, const Dim &y);

// The Dim evaluated for a bound C, or an Error(Kind::Bind) naming `what`
// when it is not a non-negative integer (e.g. C/2 for odd C).
int64_t evaluateDim(const Dim &dim, int64_t c, std::string_view what);

} // namespace lanejit
