// Fuzz target: the .npy reader (src/npy/npy.h). Any bytes: npy::parse()
// either throws Error(Kind::Io) (and nothing else) or returns an array whose
// data matches its shape and dtype; serialising that array and reading it
// back gives the same shape, dtype and bits, and serialising is
// deterministic. A float32-only parse agrees: it accepts exactly the arrays
// that are float32, with the same bits.
#include "fuzz_check.h"

#include "npy.h"

#include <lanejit/error.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

using namespace lanejit;

namespace {

bool sameBits(const npy::Array &a, const npy::Array &b) {
  return a.data.size() == b.data.size() && a.bits.size() == b.bits.size() &&
         a.int8 == b.int8 &&
         (a.data.empty() ||
          std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0) &&
         (a.bits.empty() ||
          std::memcmp(a.bits.data(), b.bits.data(), a.bits.size() * sizeof(uint16_t)) == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  npy::Array array;
  try {
    array = npy::parse(bytes, "<fuzz>", npy::Accept::Any);
  } catch (const Error &e) {
    fuzz::require(e.kind() == Error::Kind::Io,
                  std::string("npy::parse threw an Error of a kind other than Io: ") + e.what());
    return 0;
  }
  bool f32 = array.dtype == npy::Dtype::F32, i8 = array.dtype == npy::Dtype::I8;
  // The dtype's own vector holds the elements, the other two nothing.
  size_t held = f32 ? array.data.size() : i8 ? array.int8.size() : array.bits.size();
  size_t others = array.data.size() + array.bits.size() + array.int8.size() - held;
  fuzz::require(static_cast<int64_t>(held) == array.size() && others == 0,
                "data has " + std::to_string(held) + " elements (and " + std::to_string(others) +
                    " in other vectors), shape says " + std::to_string(array.size()));
  for (int64_t extent : array.shape)
    fuzz::require(extent >= 0, "negative extent in a parsed shape");

  try {
    npy::Array only_f32 = npy::parse(bytes, "<fuzz>");
    fuzz::require(f32 && only_f32.shape == array.shape && sameBits(only_f32, array),
                  "the float32-only parse returned another array");
  } catch (const Error &e) {
    fuzz::require(e.kind() == Error::Kind::Io,
                  std::string("npy::parse threw an Error of a kind other than Io: ") + e.what());
    fuzz::require(!f32, std::string("the float32-only parse refused a float32 array: ") + e.what());
  }

  std::string written = npy::serialize(array);
  npy::Array back;
  try {
    back = npy::parse(written, "<serialized>", npy::Accept::Any);
  } catch (const Error &e) {
    fuzz::finding(std::string("serialize() wrote bytes parse() rejects: ") + e.what());
  }
  fuzz::require(back.shape == array.shape, "the shape changed on a write/read round trip");
  fuzz::require(back.dtype == array.dtype, "the dtype changed on a write/read round trip");
  fuzz::require(sameBits(back, array), "the data bits changed on a write/read round trip");
  fuzz::require(npy::serialize(back) == written, "serialize() is not deterministic");
  return 0;
}
