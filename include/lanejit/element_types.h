// lanejit/element_types.h — bf16, f16 and i8, the storage types, defined once.
//
// A load widens a bf16, f16 or i8 element to f32 exactly; a store rounds an
// f32 once to nearest-even. bf16 and f16: NaN stores as the one canonical
// NaN of each type (the top bits of f32's 0xffc00000), infinities and signed
// zeros survive, denormals are kept, not flushed. i8 (quantized values):
// saturated to [-127, 127] (symmetric, so -128 never appears) and NaN
// stores 0. The kernels compute these same bits on
// every path (tests/ir/element_types_test.cpp sweeps them); the oracle, the
// checks, the CLI and the Python module use these functions.
#pragma once

#include <lanejit/ir.h>

#include <cstdint>

namespace lanejit {

inline constexpr uint16_t kCanonicalNaNBF16 = 0xffc0;
inline constexpr uint16_t kCanonicalNaNF16 = 0xfe00;

uint16_t roundToBF16(float value); // the bits torch's float -> bfloat16 gives, but NaN
float widenBF16(uint16_t bits);
uint16_t roundToF16(float value);
float widenF16(uint16_t bits); // a NaN keeps its payload and is made quiet
int8_t roundToI8(float value);  // nearest-even, then clamped to +-127; NaN -> 0

// Element `index` of a buffer of `type` (f32, bf16, f16 or i8), widened.
float readElement(const void *data, DType type, int64_t index);
// Stores `value` rounded to `type` (f32 stores as is, NaN included).
void writeElement(void *data, DType type, int64_t index, float value);

} // namespace lanejit
