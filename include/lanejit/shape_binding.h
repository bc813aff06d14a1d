// lanejit/shape_binding.h — binding caller buffers to a program's declarations.
#pragma once

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <span>
#include <string_view>

namespace lanejit {

// Infers R and C from the buffers and checks every buffer against its
// declaration: column count, row count, row stride >= cols, non-null data,
// a byte span that fits the address space (byteSpan).
// `outputs` may be empty (only inputs known); then R must follow from a row
// tensor input. Throws Error(Kind::Bind) with a message naming the buffer.
// Overlap between buffers is the runtime's concern, not the binder's.
Shape bindShape(const Program &program, std::span<const BufferRef> inputs,
                std::span<const BufferRef> outputs);

// The bytes a kernel may touch through `b` bound to `rows` rows (1 for a
// column vector): (rows - 1) * stride + cols elements of `elementBytes`
// (bytesOf the buffer's type) from b.data, row padding included; 0 when
// rows or cols is 0. Throws Error(Kind::Bind) naming `who`
// when that span does not fit in int64_t or its end wraps the address space
// (the kernel's row offsets r * stride * elementBytes would wrap too). Needs
// rows >= 0 and stride >= cols >= 0, as bindShape checks first.
int64_t byteSpan(const BufferRef &b, int64_t rows, int64_t elementBytes, std::string_view who);

} // namespace lanejit
