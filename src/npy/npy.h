// npy.h — reading and writing NumPy .npy files (float32 only).
//
// Enough of the format for exchanging test data with NumPy: little-endian
// '<f4', C order, header versions 1.0, 2.0 and 3.0. Anything else (another
// dtype, Fortran order, a truncated file, a directory) is rejected with a
// one-line Error(Kind::Io) that starts with the file's name; header text it
// quotes has control characters escaped and is cut at 80 characters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit::npy {

struct Array {
  std::vector<int64_t> shape; // empty for a 0-D array
  std::vector<float> data;    // C order, product(shape) elements
  int64_t size() const;       // product(shape); 1 for 0-D
};

// Parses the bytes of a .npy file; `source` names it in messages.
Array parse(std::string_view bytes, std::string_view source = "<npy>");
Array read(const std::string &path);

// The .npy bytes of `array` (version 1.0 unless the header needs 2.0).
std::string serialize(const Array &array);
// Writes the file whole or not at all (io/staged_files.h).
void write(const std::string &path, const Array &array);

} // namespace lanejit::npy
