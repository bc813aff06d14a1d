// lanejit/bind.h — binding caller buffers to a program's declarations.
#pragma once

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <span>

namespace lanejit {

// Infers R and C from the buffers and checks every buffer against its
// declaration: column count, row count, row stride >= cols, non-null data.
// `outputs` may be empty (only inputs known); then R must follow from a row
// tensor input. Throws Error(Kind::Bind) with a message naming the buffer.
// Overlap between buffers is the runtime's concern, not the binder's.
Shape bindShape(const Program &program, std::span<const BufferRef> inputs,
                std::span<const BufferRef> outputs);

// Every Dim of the program evaluated for a bound C, or an Error(Kind::Bind)
// when one is not a non-negative integer (e.g. C/2 for odd C).
int64_t evaluateDim(const Dim &dim, int64_t c, std::string_view what);

} // namespace lanejit
