// The oracle's per-element semantics (ir.h's op comments, in FP64): f32
// values are doubles computed with libm, i32 values are exact integers that
// wrap to 32 bits as the kernels' do, bool is 0/1.
#pragma once

#include <lanejit/ir.h>

#include <vector>

namespace lanejit::reference {

// `type` is the operand type (the result type follows from op and type).
double unary(UnaryOp op, DType type, double x);
double binary(BinaryOp op, DType type, double a, double b);
// Sequential, in double; mean = sum / length; max/min as the binary ops.
double reduce(ReduceOp op, const std::vector<double> &values);

// IEEE 754-2019 minimum/maximum: NaN wins, -0 < +0.
double minimum(double a, double b);
double maximum(double a, double b);

} // namespace lanejit::reference
