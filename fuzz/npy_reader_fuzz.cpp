// Fuzz target: the .npy reader (src/npy/npy.h). Any bytes: npy::parse()
// either throws Error(Kind::Io) (and nothing else) or returns an array whose
// data matches its shape; serialising that array and reading it back gives
// the same shape and the same bits, and serialising is deterministic.
#include "fuzz_check.h"

#include "npy.h"

#include <lanejit/error.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

using namespace lanejit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  npy::Array array;
  try {
    array = npy::parse(bytes, "<fuzz>");
  } catch (const Error &e) {
    fuzz::require(e.kind() == Error::Kind::Io,
                  std::string("npy::parse threw an Error of a kind other than Io: ") + e.what());
    return 0;
  }
  fuzz::require(static_cast<int64_t>(array.data.size()) == array.size(),
                "data has " + std::to_string(array.data.size()) + " elements, shape says " +
                    std::to_string(array.size()));
  for (int64_t extent : array.shape)
    fuzz::require(extent >= 0, "negative extent in a parsed shape");
  std::string written = npy::serialize(array);
  npy::Array back;
  try {
    back = npy::parse(written, "<serialized>");
  } catch (const Error &e) {
    fuzz::finding(std::string("serialize() wrote bytes parse() rejects: ") + e.what());
  }
  fuzz::require(back.shape == array.shape, "the shape changed on a write/read round trip");
  fuzz::require(back.data.size() == array.data.size() &&
                    (array.data.empty() || std::memcmp(back.data.data(), array.data.data(),
                                                       array.data.size() * sizeof(float)) == 0),
                "the data bits changed on a write/read round trip");
  fuzz::require(npy::serialize(back) == written, "serialize() is not deterministic");
  return 0;
}
