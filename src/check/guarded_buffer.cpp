// GuardedBuffer: aligned f32 storage with sentinel zones on both sides, so a
// kernel that writes one element too far (or too early) is caught.
#include <lanejit/check.h>
#include <lanejit/error.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace lanejit::check {
namespace {

// A signalling NaN no arithmetic produces, compared bitwise.
constexpr uint32_t kSentinelBits = 0x7fbadbadu;
constexpr size_t kAlignment = 64;

float sentinel() {
  float value;
  std::memcpy(&value, &kSentinelBits, sizeof value);
  return value;
}

int64_t payloadElements(int64_t rows, int64_t cols, int64_t stride) {
  if (rows <= 0 || cols <= 0)
    return 0;
  return (rows - 1) * stride + cols; // the constructor checked it fits
}

// Total floats allocated: guard + payload + guard, rounded up to a whole
// number of alignment units as aligned_alloc requires; nullopt when that
// overflows.
std::optional<size_t> allocationBytes(int64_t rows, int64_t cols, int64_t stride) {
  int64_t floats = 0, bytes = 0;
  if (rows > 0 && cols > 0 &&
      (__builtin_mul_overflow(rows - 1, stride, &floats) ||
       __builtin_add_overflow(floats, cols, &floats)))
    return std::nullopt;
  if (__builtin_add_overflow(floats, 2 * GuardedBuffer::kGuard, &floats) ||
      __builtin_mul_overflow(floats, int64_t{sizeof(float)}, &bytes) ||
      __builtin_add_overflow(bytes, int64_t{kAlignment - 1}, &bytes))
    return std::nullopt;
  return static_cast<size_t>(bytes) / kAlignment * kAlignment;
}

bool zoneIntact(const float *zone) {
  for (int64_t i = 0; i < GuardedBuffer::kGuard; ++i) {
    uint32_t bits;
    std::memcpy(&bits, zone + i, sizeof bits);
    if (bits != kSentinelBits)
      return false;
  }
  return true;
}

} // namespace

GuardedBuffer::GuardedBuffer(int64_t rows, int64_t cols, int64_t row_stride)
    : rows_(rows), cols_(cols), stride_(row_stride) {
  if (rows < 0 || cols < 0 || row_stride < cols)
    throw Error(Error::Kind::Bind, "GuardedBuffer: bad shape [" + std::to_string(rows) + ", " +
                                       std::to_string(cols) + "] with row stride " +
                                       std::to_string(row_stride));
  std::optional<size_t> bytes = allocationBytes(rows, cols, row_stride);
  if (!bytes)
    throw Error(Error::Kind::Bind, "GuardedBuffer: shape [" + std::to_string(rows) + ", " +
                                       std::to_string(cols) + "] with row stride " +
                                       std::to_string(row_stride) + " overflows the address space");
  base_ = static_cast<float *>(std::aligned_alloc(kAlignment, *bytes));
  if (!base_)
    throw std::bad_alloc();
  payload_ = base_ + kGuard;
  std::fill(base_, payload_, sentinel());
  std::fill(payload_ + elements(), payload_ + elements() + kGuard, sentinel());
  // Touch every payload page now so no later timing pays for first faults.
  fill(0.0f);
}

GuardedBuffer::GuardedBuffer(const GuardedBuffer &other)
    : rows_(other.rows_), cols_(other.cols_), stride_(other.stride_) {
  if (!other.base_)
    return;
  size_t bytes = *allocationBytes(rows_, cols_, stride_);
  base_ = static_cast<float *>(std::aligned_alloc(kAlignment, bytes));
  if (!base_)
    throw std::bad_alloc();
  payload_ = base_ + kGuard;
  // Guards included: a copy of a damaged buffer stays damaged.
  std::memcpy(base_, other.base_, bytes);
}

GuardedBuffer &GuardedBuffer::operator=(const GuardedBuffer &other) {
  if (this != &other)
    *this = GuardedBuffer(other);
  return *this;
}

GuardedBuffer::GuardedBuffer(GuardedBuffer &&other) noexcept
    : base_(std::exchange(other.base_, nullptr)), payload_(std::exchange(other.payload_, nullptr)),
      rows_(std::exchange(other.rows_, 0)), cols_(std::exchange(other.cols_, 0)),
      stride_(std::exchange(other.stride_, 0)) {}

GuardedBuffer &GuardedBuffer::operator=(GuardedBuffer &&other) noexcept {
  if (this == &other)
    return *this;
  std::free(base_);
  base_ = std::exchange(other.base_, nullptr);
  payload_ = std::exchange(other.payload_, nullptr);
  rows_ = std::exchange(other.rows_, 0);
  cols_ = std::exchange(other.cols_, 0);
  stride_ = std::exchange(other.stride_, 0);
  return *this;
}

GuardedBuffer::~GuardedBuffer() {
  std::free(base_);
}

int64_t GuardedBuffer::elements() const {
  return payloadElements(rows_, cols_, stride_);
}

void GuardedBuffer::fill(float value) {
  if (payload_)
    std::fill(payload_, payload_ + elements(), value);
}

bool GuardedBuffer::guardsIntact() const {
  if (!base_)
    return true;
  return zoneIntact(base_) && zoneIntact(payload_ + elements());
}

uint64_t GuardedBuffer::hash() const {
  return hashBytes(payload_, static_cast<size_t>(elements()) * sizeof(float));
}

} // namespace lanejit::check
