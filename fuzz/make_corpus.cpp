// Writes the fuzz targets' seed corpus, deterministically:
//   build/fuzz/fuzz_make_corpus fuzz/corpus
// text_roundtrip and compile_run: the library's programs as printed text
// (with f32 buffers, and with bf16 or f16 ones), its quantizing entries (i8
// outputs, per row and per block), the two docs/text-format.md examples and
// hand-written programs covering every node kind (group and repeat with
// slices too), string names, special constants and i8 inputs.
// npy_reader: float32 files of several shapes (0-D, empty, 1-D, 2-D, 3-D),
// float16 and bfloat16 files (as numpy and ml_dtypes write them, and bf16
// bits as uint16/int16), int8 files, and the header variants the reader must
// refuse or accept (other dtypes, Fortran order, versions 2.0 and 3.0,
// truncated data). Each file is written whole (temporary file, then rename).
#include "npy.h"

#include <lanejit/library.h>
#include <lanejit/text.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace lanejit;

namespace {

void writeWhole(const fs::path &path, const std::string &bytes) {
  fs::path temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
      throw std::runtime_error("cannot write " + temp.string());
  }
  fs::rename(temp, path);
}

const char *const kPrograms[][2] = {
    {"doc_layernorm_eps.txt", R"(# LayerNorm with a scalar epsilon
program layernorm {
  in x: f32[R, C]          # row tensor [R, C]
  in gamma: f32[C]         # column vector, shared by every row
  in eps: f32              # scalar
  out y: f32[R, C]
  %0 = load x[0:C]         # columns [0, C) of this row of x
  %1 = reduce.mean %0      # row-uniform
  %2 = sub %0, %1          # broadcasts %1 over the columns
  %3 = mul %2, %2
  %4 = reduce.mean %3
  %5 = load eps
  %6 = add %4, %5
  %7 = rsqrt %6
  %8 = mul %2, %7
  %9 = load gamma[0:C]
  %10 = mul %8, %9
  y[0:C] = %10             # write columns [0, C) of y
}
)"},
    {"slices_and_indices.txt", R"(program "odd name\x01" {
  in x: f32[R, C]
  in "in": f32[C/2+1]
  out "out": f32[R, C/2]
  out z: f32[R, 3]
  %a = load x[C/2:C]
  %b = load "in"[0:C/2]
  %c = slice %a[0:C/2]
  %d = fma %c, %b, %a
  %r = row
  %k = col[0:C/2]
  %m = mod %k, %r
  %e = eq %m, %r
  %f = select %e, %d, %c
  "out"[0:C/2] = %f
  %s = reduce.sum %f
  %t = reduce.max %a
  %u = dim (C+2)/2
  %v = tof32 %u
  %w = div %s, %v
  z[0:1] = %w
  z[1:2] = %t
  %g = const f32 -0
  z[2:3] = %g
}
)"},
    {"constants.txt", R"(program consts {
  in x: f32[R, C]
  out y: f32[R, C]
  out w: f32[R, 4]
  %0 = load x[0:C]
  %1 = const f32 3.4028235e+38
  %2 = const f32 1e-45
  %3 = const f32 nan
  %4 = const f32 -inf
  %5 = min %0, %1
  %6 = max %5, %4
  %7 = mul %6, %2
  %8 = const i32 -2147483648
  %9 = const bool true
  %10 = not %9
  %11 = select %10, %3, %7
  y[0:C] = %11
  %12 = toi32 %0
  %13 = max %12, %8
  %14 = tof32 %13
  %15 = reduce.min %14
  w[0:4] = %15
}
)"},
    {"storage_types.txt", R"(program storage {
  in x: bf16[R, C]
  in g: f16[C]
  in eps: bf16
  in b: f32[C]
  out y: f16[R, C]
  out z: bf16[R, C]
  out w: f32[R, C]
  %x = load x[0:C]
  %g = load g[0:C]
  %e = load eps
  %b = load b[0:C]
  %0 = mul %x, %g
  %1 = add %0, %e
  y[0:C] = %1
  %2 = reduce.max %x
  %3 = sub %x, %2
  %4 = exp %3
  z[0:C] = %4
  %5 = add %b, %x
  w[0:C] = %5
}
)"},
    {"int8_dequantize.txt", R"(program dequantize {
  in q: i8[R, C]
  in s: f32[R, 1]
  in g: i8[C]
  in z: i8
  out y: f32[R, C]
  out c: i8[R, C]
  out h: bf16[R, C]
  %q = load q[0:C]
  %s = load s[0:1]
  %0 = reduce.max %s
  %z = load z
  %1 = sub %q, %z
  %2 = mul %1, %0
  y[0:C] = %2
  %g = load g[0:C]
  %3 = mul %q, %g
  c[0:C] = %3
  h[0:C] = %2
}
)"},
    // Q8_0's nodes: groups of even and odd sizes (of a group too), repeats,
    // and slices above and below them at C/2 and C/4, which fall inside a
    // run of 4 when C = 12 or 36; it binds where 12 divides C.
    {"groups_and_repeats.txt", R"(# group and repeat, sliced above and below
program groups {
  in x: f32[R, C]
  in s: f32[R, C/4]
  out m: f32[R, C/4]
  out y: f32[R, C]
  out h: f32[R, C/2]
  out k: f32[R, C/2]
  out t: f32[R, 2]
  %x = load x[0:C]
  %a = abs %x
  %g = group.max %a by 4
  %s = load s[0:C/4]
  %0 = group.sum %x by 4
  %1 = mul %0, %s
  m[0:C/4] = %1
  %r = repeat %g by 4
  %2 = div %x, %r
  y[0:C] = %2
  %u = repeat %0 by 4
  %hi = slice %u[C/2:C]
  h[0:C/2] = %hi
  %lo = slice %x[C/4:3*C/4]
  %n = group.min %lo by 2
  %v = repeat %n by 2
  %mid = slice %u[C/4:3*C/4]
  %w = add %v, %mid
  k[0:C/2] = %w
  %e = group.mean %x by 6
  %q = reduce.sum %e
  t[0:1] = %q
  %z = group.sum %g by 3
  %zz = reduce.max %z
  t[1:2] = %zz
}
)"},
    {"activations.txt", R"(program acts {
  in x: f32[R, C]
  in u: f32[R, C]
  out y: f32[R, C]
  %x = load x[0:C]
  %u = load u[0:C]
  %a = sigmoid %x
  %b = tanh %u
  %c = exp %x
  %d = abs %u
  %e = log %d
  %f = sqrt %d
  %g = neg %e
  %h = add %a, %b
  %i = sub %c, %g
  %j = mul %h, %i
  %k = div %j, %f
  %l = gt %x, %u
  %m = ge %x, %u
  %n = and %l, %m
  %o = lt %x, %u
  %p = le %x, %u
  %q = or %o, %p
  %r = ne %n, %q
  %s = select %r, %k, %j
  y[0:C] = %s
}
)"},
};

// A .npy file by hand, for headers serialize() never writes.
std::string rawNpy(int major, const std::string &dict, const std::string &data) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  size_t n = header.size();
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

// 16-bit patterns that are special in f16 or bf16: signed zeros, the
// smallest and largest subnormal, one, the largest finite, infinities, NaNs.
const uint16_t kHalfPatterns[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x3c00, 0xbc00, 0x7bff, 0x7c00,
                                  0xfc00, 0x7e00, 0xfe00, 0x3f80, 0x7f80, 0xffc0, 0x7fc1};

std::string halves(int n) {
  std::string data;
  for (int i = 0; i < n; ++i)
    data.append(reinterpret_cast<const char *>(&kHalfPatterns[i % 15]), sizeof(uint16_t));
  return data;
}

// int8 values at both ends of the range (-128 included, which no write
// stores), around zero and in between.
const int8_t kInt8Values[] = {-128, -127, -64, -2, -1, 0, 1, 2, 63, 64, 100, 126, 127, 5, -5};

std::string int8s(int n) {
  std::string data;
  for (int i = 0; i < n; ++i)
    data.push_back(static_cast<char>(kInt8Values[i % 15]));
  return data;
}

std::string floats(int n) {
  std::string data;
  for (int i = 0; i < n; ++i) {
    float v = 0.25f * static_cast<float>(i) - 1.0f;
    data.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  return data;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2 || !fs::is_directory(argv[1])) {
    std::fprintf(stderr, "usage: fuzz_make_corpus <fuzz/corpus directory, existing>\n");
    return 2;
  }
  fs::path root = argv[1];
  for (const char *target : {"text_roundtrip", "compile_run", "npy_reader"})
    fs::create_directories(root / target);

  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto *entries : {&library::all(), &library::quantizing()})
    for (const library::Entry &entry : *entries) {
      texts.emplace_back("library_" + entry.name + ".txt", print(entry.make()));
      // withStorage keeps the quantizing entries' i8 outputs i8.
      DType storage = entry.name.size() % 2 ? DType::BF16 : DType::F16;
      texts.emplace_back("library_" + entry.name + "_" + std::string(name(storage)) + ".txt",
                         print(withStorage(entry.make(), storage)));
    }
  for (const auto &program : kPrograms) {
    parse(program[1]); // a seed that does not parse would be a weak seed
    texts.emplace_back(program[0], program[1]);
  }
  for (const auto &[name, text] : texts) {
    writeWhole(root / "text_roundtrip" / name, text);
    writeWhole(root / "compile_run" / name, text);
  }

  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"f4_0d", {}}, {"f4_empty", {0}}, {"f4_1d", {5}}, {"f4_2d", {3, 4}},
      {"f4_3d", {2, 1, 3}}, {"f4_2d_empty", {4, 0}}};
  for (const auto &[name, shape] : shapes) {
    npy::Array a;
    a.shape = shape;
    a.data.resize(static_cast<size_t>(a.size()));
    for (size_t i = 0; i < a.data.size(); ++i)
      a.data[i] = 0.5f * static_cast<float>(i) - 1.0f;
    writeWhole(root / "npy_reader" / (name), npy::serialize(a));
  }
  // 16-bit files as serialize() writes them: '<f2' is numpy's float16 and
  // '<V2' what np.save writes for ml_dtypes.bfloat16.
  const std::pair<std::string, npy::Dtype> halves_seeds[] = {
      {"f2_2d", npy::Dtype::F16}, {"bf16_2d", npy::Dtype::BF16},
      {"u2_2d", npy::Dtype::U16}, {"i2_2d", npy::Dtype::I16}};
  for (const auto &[name, dtype] : halves_seeds) {
    npy::Array a;
    a.shape = {3, 5};
    a.dtype = dtype;
    a.bits.assign(std::begin(kHalfPatterns), std::end(kHalfPatterns));
    writeWhole(root / "npy_reader" / name, npy::serialize(a));
  }
  // int8 as np.save writes numpy's int8 arrays ('|i1').
  {
    npy::Array a;
    a.shape = {3, 5};
    a.dtype = npy::Dtype::I8;
    a.int8.assign(std::begin(kInt8Values), std::end(kInt8Values));
    writeWhole(root / "npy_reader" / "i1_2d", npy::serialize(a));
  }
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::vector<std::pair<std::string, std::string>> raw = {
      {"f4_v2", rawNpy(2, f4, floats(6))},
      {"f4_v3", rawNpy(3, f4, floats(6))},
      {"f4_truncated", rawNpy(1, f4, floats(5))},
      {"f4_fortran_1d",
       rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", floats(3))},
      {"f4_fortran_2d",
       rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", floats(4))},
      {"f8", rawNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", floats(4))},
      {"f4_big_endian",
       rawNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", floats(2))},
      {"i4", rawNpy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", floats(3))},
      {"f4_python2_long",
       rawNpy(1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2L, 1L)}", floats(2))},
      {"f2_0d", rawNpy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }", halves(1))},
      {"f2_big_endian",
       rawNpy(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (4,), }", halves(4))},
      {"f2_truncated",
       rawNpy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", halves(5))},
      {"bf16_void",
       rawNpy(1, "{'descr': '|V2', 'fortran_order': False, 'shape': (7,), }", halves(7))},
      {"bf16_v2", rawNpy(2, "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 3), }",
                         halves(6))},
      {"bf16_big_endian",
       rawNpy(1, "{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }", halves(2))},
      {"i1_0d", rawNpy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (), }", int8s(1))},
      {"i1_truncated",
       rawNpy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }", int8s(5))},
      {"u1", rawNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", int8s(4))},
  };
  for (const auto &[name, bytes] : raw)
    writeWhole(root / "npy_reader" / name, bytes);
  std::printf("wrote %zu text seeds (twice) and %zu .npy seeds under %s\n", texts.size(),
              shapes.size() + std::size(halves_seeds) + 1 + raw.size(), root.c_str());
  return 0;
}
