// npy.h — reading and writing NumPy .npy files: float32, 16-bit data
// (float16, bfloat16) kept as its stored bits, and int8.
//
// Enough of the format for exchanging data with NumPy: little-endian, C
// order, header versions 1.0, 2.0 and 3.0, and the dtypes of `Dtype`.
// Anything else (another dtype, Fortran order, a truncated file, a
// directory) is rejected with a one-line Error(Kind::Io) that starts with the
// file's name; header text it quotes has control characters escaped and is
// cut at 80 characters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit::npy {

// A file's element type, from its header's 'descr'. What a 16-bit dtype
// means for a program's buffer is the reader's choice (`lanejit run`:
// docs/element-types.md, "Files").
enum class Dtype : uint8_t {
  F32,  // '<f4' float32
  F16,  // '<f2' float16
  BF16, // '<V2': what np.save writes for ml_dtypes.bfloat16 ('|V2', NumPy's
        // own 2-byte void, reads the same and is written as '<V2')
  U16,  // '<u2' uint16: bf16 bits as torch saves them, t.view(torch.uint16)
  I16,  // '<i2' int16: the same from t.view(torch.int16)
  I8,   // '|i1' int8: quantized values
};
// The descr serialize() writes: "<f4", "<f2", "<V2", "<u2", "<i2" or "|i1".
std::string_view descr(Dtype dtype);
// For messages: "float32 ('<f4')", "bfloat16 ('<V2')", ...
std::string describe(Dtype dtype);

struct Array {
  std::vector<int64_t> shape;   // empty for a 0-D array
  std::vector<float> data;      // C order, product(shape) elements, when dtype is F32
  Dtype dtype = Dtype::F32;
  std::vector<uint16_t> bits;   // the same for every 16-bit dtype, as stored
  std::vector<int8_t> int8;     // the same for I8
  int64_t size() const;         // product(shape); 1 for 0-D
  // The elements, whichever vector holds them.
  const void *raw() const;
  void *raw();
};

// The dtypes a caller handles. A caller that indexes `data` keeps the
// default and never receives a 16-bit or int8 array.
enum class Accept : uint8_t { Float32, Any };

// Parses the bytes of a .npy file; `source` names it in messages.
Array parse(std::string_view bytes, std::string_view source = "<npy>",
            Accept accept = Accept::Float32);
Array read(const std::string &path, Accept accept = Accept::Float32);

// The .npy bytes of `array` (version 1.0 unless the header needs 2.0): for
// bf16 byte for byte what np.save writes for an ml_dtypes.bfloat16 array.
std::string serialize(const Array &array);
// Writes the file whole or not at all (io/staged_files.h).
void write(const std::string &path, const Array &array);

} // namespace lanejit::npy
