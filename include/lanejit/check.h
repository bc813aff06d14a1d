// lanejit/check.h — data and checks shared by the tests and the
// benchmark: the deterministic fixtures (docs/library.md, "Fixtures"), seeded random data,
// 64-byte-aligned buffers with guard zones, input hashing, and comparison
// against the FP64 oracle at atol = rtol = 5e-5.
#pragma once

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit::check {

constexpr double kTolerance = 5e-5; // |y - ref| <= atol + rtol*|ref|

// The fixture for an input named x, cos, sin, gamma, beta or u:
// element i (flat index) = f(i) in f64, rounded to f32. Any other name gets
// x's formula.
float fixtureValue(std::string_view input_name, int64_t i);

// Storage of f32, bf16 or f16 elements, 64-byte aligned, with `kGuard`
// elements' worth of sentinel bytes before and after the payload
// (kGuard * 4 bytes). Allocated and touched once; copies are deep. data()
// and at() see f32 buffers; get() and set() any type (widened, rounded).
class GuardedBuffer {
public:
  static constexpr int64_t kGuard = 64;
  GuardedBuffer() = default;
  GuardedBuffer(int64_t rows, int64_t cols, int64_t row_stride, DType type = DType::F32);
  GuardedBuffer(const GuardedBuffer &other);
  GuardedBuffer &operator=(const GuardedBuffer &other);
  // Not defaulted: a default move would copy the owning pointer.
  GuardedBuffer(GuardedBuffer &&other) noexcept;
  GuardedBuffer &operator=(GuardedBuffer &&other) noexcept;
  ~GuardedBuffer();

  float *data() { return reinterpret_cast<float *>(payload_); }
  const float *data() const { return reinterpret_cast<const float *>(payload_); }
  void *raw() const { return payload_; }
  DType type() const { return type_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t rowStride() const { return stride_; }
  int64_t elements() const; // (rows-1)*stride + cols, 0 when empty
  int64_t bytes() const { return elements() * bytesOf(type_); }
  float &at(int64_t r, int64_t c) { return data()[r * stride_ + c]; }
  float at(int64_t r, int64_t c) const { return data()[r * stride_ + c]; }
  float get(int64_t r, int64_t c) const; // widened from the buffer's type
  void set(int64_t r, int64_t c, float value); // rounded to the buffer's type
  BufferRef ref() const { return BufferRef::matrix(payload_, rows_, cols_, stride_); }

  void fill(float value);    // every element incl. stride padding, rounded
  bool guardsIntact() const; // both sentinel zones untouched
  uint64_t hash() const;     // of the payload's bytes

private:
  unsigned char *base_ = nullptr; // allocation start (guard zone)
  unsigned char *payload_ = nullptr;
  int64_t rows_ = 0, cols_ = 0, stride_ = 0;
  DType type_ = DType::F32;
};

enum class Fill { Fixture, Random };

// Buffers for one call of `program` at `shape`, of the declared element
// types: inputs filled (fixtures by input name, or seeded uniform random in
// [-2, 2]; scalars get 1e-5 for fixtures; rounded to bf16 or f16 buffers;
// times 63.5, then rounded, for i8 buffers),
// outputs pre-filled with NaN (i8: -128). row_stride_pad adds padding floats
// to every row tensor's stride.
struct Case {
  Program program;
  Shape shape;
  std::vector<GuardedBuffer> inputs;
  std::vector<GuardedBuffer> outputs;
  std::vector<BufferRef> inputRefs() const;
  std::vector<BufferRef> outputRefs() const;
};
Case makeCase(const Program &program, Shape shape, Fill fill = Fill::Fixture, uint64_t seed = 1,
              int64_t row_stride_pad = 0);

struct Comparison {
  int64_t checked = 0;
  int64_t failures = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // |y-ref| / |ref| over elements with ref != 0
  std::string first_failure; // "y[3,17]: got 1.5, want 1.25" or empty
  bool ok() const { return failures == 0; }
};
// Runs the FP64 oracle on the case's inputs (as stored) and compares every
// output element (NaN matches only NaN, infinities must be equal). A bf16
// or f16 output may also be one unit in its last place off, and must be
// infinite where the oracle's value rounds to infinity in its type; an i8
// output may be one step off the oracle's value as stored.
Comparison compareWithReference(const Case &c);

// Whether an output element y of `type` agrees with the oracle's value
// want, as compareWithReference judges it: NaN matches only NaN,
// infinities must be equal, else |y - want| <= atol + rtol*|want| plus, for
// bf16 and f16, one unit in their last place at want (and infinity where
// want rounds to it in that type); i8: |y - roundToI8(want)| <= 1.
bool agrees(double y, double want, DType type);

// FNV-1a over bytes; used for input-unchanged and bitwise-identity checks.
uint64_t hashBytes(const void *data, size_t bytes);

} // namespace lanejit::check
