// lanejit/buffer.h — how callers hand memory to a kernel.
//
// A BufferRef is a pointer plus a shape in elements; lanejit never owns or
// frees it. Row tensors are [rows, cols] with row_stride >= cols; column
// vectors are [cols]; scalars point to one element.
#pragma once

#include <cstdint>

namespace lanejit {

struct BufferRef {
  void *data = nullptr;
  int64_t rows = 1;
  int64_t cols = 1;
  int64_t row_stride = 0; // elements; 0 means dense (= cols)

  static BufferRef matrix(const void *data, int64_t rows, int64_t cols, int64_t row_stride = 0) {
    return {const_cast<void *>(data), rows, cols, row_stride ? row_stride : cols};
  }
  static BufferRef vector(const void *data, int64_t cols) {
    return {const_cast<void *>(data), 1, cols, cols};
  }
  static BufferRef scalar(const void *data) { return {const_cast<void *>(data), 1, 1, 1}; }
  int64_t stride() const { return row_stride ? row_stride : cols; }
};

// The problem size a call is bound to: R rows, symbolic column count C.
struct Shape {
  int64_t rows = 0;
  int64_t cols = 0;
};

} // namespace lanejit
