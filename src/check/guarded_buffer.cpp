// GuardedBuffer: aligned storage of f32, bf16 or f16 elements with sentinel
// zones on both sides, so a kernel that writes one element too far (or too
// early) is caught.
#include <lanejit/check.h>
#include <lanejit/element_types.h>
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

// A signalling NaN no arithmetic produces, repeated over the zone and
// compared bytewise.
constexpr uint32_t kSentinelBits = 0x7fbadbadu;
constexpr size_t kAlignment = 64;
constexpr int64_t kZoneBytes = GuardedBuffer::kGuard * 4;

int64_t payloadElements(int64_t rows, int64_t cols, int64_t stride) {
  if (rows <= 0 || cols <= 0)
    return 0;
  return (rows - 1) * stride + cols; // the constructor checked it fits
}

// Total bytes allocated: guard + payload + guard, rounded up to a whole
// number of alignment units as aligned_alloc requires; nullopt when that
// overflows.
std::optional<size_t> allocationBytes(int64_t rows, int64_t cols, int64_t stride, DType type) {
  int64_t elements = 0, bytes = 0;
  if (rows > 0 && cols > 0 &&
      (__builtin_mul_overflow(rows - 1, stride, &elements) ||
       __builtin_add_overflow(elements, cols, &elements)))
    return std::nullopt;
  if (__builtin_mul_overflow(elements, bytesOf(type), &bytes) ||
      __builtin_add_overflow(bytes, 2 * kZoneBytes, &bytes) ||
      __builtin_add_overflow(bytes, int64_t{kAlignment - 1}, &bytes))
    return std::nullopt;
  return static_cast<size_t>(bytes) / kAlignment * kAlignment;
}

void fillZone(unsigned char *zone) {
  for (int64_t i = 0; i < kZoneBytes; i += 4)
    std::memcpy(zone + i, &kSentinelBits, 4);
}

bool zoneIntact(const unsigned char *zone) {
  for (int64_t i = 0; i < kZoneBytes; i += 4)
    if (std::memcmp(zone + i, &kSentinelBits, 4) != 0)
      return false;
  return true;
}

} // namespace

GuardedBuffer::GuardedBuffer(int64_t rows, int64_t cols, int64_t row_stride, DType type)
    : rows_(rows), cols_(cols), stride_(row_stride), type_(type) {
  if (rows < 0 || cols < 0 || row_stride < cols)
    throw Error(Error::Kind::Bind, "GuardedBuffer: bad shape [" + std::to_string(rows) + ", " +
                                       std::to_string(cols) + "] with row stride " +
                                       std::to_string(row_stride));
  if (type != DType::F32 && !isStorageOnly(type))
    throw Error(Error::Kind::Bind, "GuardedBuffer: buffers hold f32, bf16, f16 or i8, not " +
                                       std::string(name(type)));
  std::optional<size_t> bytes = allocationBytes(rows, cols, row_stride, type);
  if (!bytes)
    throw Error(Error::Kind::Bind, "GuardedBuffer: shape [" + std::to_string(rows) + ", " +
                                       std::to_string(cols) + "] with row stride " +
                                       std::to_string(row_stride) + " overflows the address space");
  base_ = static_cast<unsigned char *>(std::aligned_alloc(kAlignment, *bytes));
  if (!base_)
    throw std::bad_alloc();
  payload_ = base_ + kZoneBytes;
  fillZone(base_);
  fillZone(payload_ + this->bytes());
  // Touch every payload page now so no later timing pays for first faults.
  fill(0.0f);
}

GuardedBuffer::GuardedBuffer(const GuardedBuffer &other)
    : rows_(other.rows_), cols_(other.cols_), stride_(other.stride_), type_(other.type_) {
  if (!other.base_)
    return;
  size_t bytes = *allocationBytes(rows_, cols_, stride_, type_);
  base_ = static_cast<unsigned char *>(std::aligned_alloc(kAlignment, bytes));
  if (!base_)
    throw std::bad_alloc();
  payload_ = base_ + kZoneBytes;
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
      stride_(std::exchange(other.stride_, 0)), type_(other.type_) {}

GuardedBuffer &GuardedBuffer::operator=(GuardedBuffer &&other) noexcept {
  if (this == &other)
    return *this;
  std::free(base_);
  base_ = std::exchange(other.base_, nullptr);
  payload_ = std::exchange(other.payload_, nullptr);
  rows_ = std::exchange(other.rows_, 0);
  cols_ = std::exchange(other.cols_, 0);
  stride_ = std::exchange(other.stride_, 0);
  type_ = other.type_;
  return *this;
}

GuardedBuffer::~GuardedBuffer() {
  std::free(base_);
}

int64_t GuardedBuffer::elements() const {
  return payloadElements(rows_, cols_, stride_);
}

float GuardedBuffer::get(int64_t r, int64_t c) const {
  return readElement(payload_, type_, r * stride_ + c);
}

void GuardedBuffer::set(int64_t r, int64_t c, float value) {
  writeElement(payload_, type_, r * stride_ + c, value);
}

void GuardedBuffer::fill(float value) {
  if (!payload_)
    return;
  if (type_ == DType::F32) {
    std::fill(data(), data() + elements(), value);
    return;
  }
  writeElement(payload_, type_, 0, value);
  const int64_t size = bytesOf(type_);
  for (int64_t i = 1; i < elements(); ++i)
    std::memcpy(payload_ + size * i, payload_, static_cast<size_t>(size));
}

bool GuardedBuffer::guardsIntact() const {
  if (!base_)
    return true;
  return zoneIntact(base_) && zoneIntact(payload_ + bytes());
}

uint64_t GuardedBuffer::hash() const {
  return hashBytes(payload_, static_cast<size_t>(bytes()));
}

} // namespace lanejit::check
