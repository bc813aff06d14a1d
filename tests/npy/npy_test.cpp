// .npy reading and writing: round trips (every 16-bit pattern bit for bit),
// every dtype accepted or refused, and one test per class of bad file with
// the message it must produce.
#include "npy.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace lanejit::npy {
namespace {

// A .npy file with the given version and header text, padded the NumPy way,
// followed by `data_bytes` bytes of data.
std::string npyBytes(const std::string &dict, size_t data_bytes, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + std::string(data_bytes, '\0');
}

std::string dict(const std::string &descr, const std::string &fortran, const std::string &shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// The message parse() throws for `bytes`, or "" when it accepts them.
std::string errorFor(const std::string &bytes, Accept accept = Accept::Float32) {
  try {
    parse(bytes, "bad.npy", accept);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Io);
    return e.what();
  }
  return "";
}

// One line, and nothing a terminal would interpret: no control characters.
void expectPrintableLine(const std::string &message) {
  EXPECT_TRUE(std::none_of(message.begin(), message.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  })) << message;
}

void expectRejected(const std::string &bytes, const std::string &phrase,
                    Accept accept = Accept::Float32) {
  std::string message = errorFor(bytes, accept);
  EXPECT_EQ(message.rfind("bad.npy: ", 0), 0u) << message;
  EXPECT_NE(message.find(phrase), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  expectPrintableLine(message);
}

// The message read() throws for `path`.
std::string readError(const std::string &path) {
  try {
    read(path);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Io);
    return e.what();
  }
  ADD_FAILURE() << "read(" << path << ") accepted it";
  return "";
}

TEST(Npy, RoundTripsAMatrix) {
  Array a{{3, 4}, {}};
  for (int i = 0; i < 12; ++i)
    a.data.push_back(0.5f * i - 2.0f);
  a.data[5] = -0.0f;
  a.data[6] = std::nanf("");
  std::string bytes = serialize(a);
  // NumPy's layout: magic, version 1.0, data on a 64-byte boundary.
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((bytes.size() - 12 * 4) % 64, 0u);
  Array b = parse(bytes);
  EXPECT_EQ(b.shape, a.shape);
  ASSERT_EQ(b.data.size(), 12u);
  EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), 12 * sizeof(float)), 0);
}

TEST(Npy, RoundTripsVectorsScalarsAndEmptyArrays) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{5}, std::vector<int64_t>{},
                                     std::vector<int64_t>{0, 3}, std::vector<int64_t>{2, 1, 2}}) {
    Array a{shape, std::vector<float>(Array{shape, {}}.size(), 1.25f)};
    Array b = parse(serialize(a));
    EXPECT_EQ(b.shape, shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST(Npy, RoundTripsThroughAFile) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("lanejit_npy_test_" + std::to_string(::getpid()) + ".npy"))
                         .string();
  Array a{{2, 2}, {1, 2, 3, 4}};
  write(path, a);
  Array b = read(path);
  std::remove(path.c_str());
  EXPECT_EQ(b.data, a.data);
}

TEST(Npy, AcceptsHeaderVersions2And3AndNumpyQuirks) {
  EXPECT_EQ(errorFor(npyBytes(dict("<f4", "False", "(2,)"), 8, 2)), "");
  EXPECT_EQ(errorFor(npyBytes(dict("<f4", "False", "(2,)"), 8, 3)), "");
  // Key order is free, Python 2 longs carry an L, 1-D Fortran order is C order.
  EXPECT_EQ(errorFor(npyBytes("{'shape': (1L, 2L), 'fortran_order': False, 'descr': '<f4'}", 8)),
            "");
  EXPECT_EQ(errorFor(npyBytes(dict("<f4", "True", "(3,)"), 12)), "");
}

TEST(Npy, RejectsBadMagic) {
  expectRejected("PK\x03\x04 this is a zip file", "not a .npy file");
  expectRejected("", "not a .npy file");
}

TEST(Npy, RejectsUnknownVersions) {
  std::string bytes = npyBytes(dict("<f4", "False", "(2,)"), 8);
  bytes[6] = 4;
  expectRejected(bytes, "unsupported .npy version 4.0");
}

TEST(Npy, RejectsOtherDtypes) {
  expectRejected(npyBytes(dict("<f8", "False", "(2,)"), 16), "dtype '<f8' is not supported");
  expectRejected(npyBytes(dict("<i4", "False", "(2,)"), 8), "only float32");
  expectRejected(npyBytes(dict(">f4", "False", "(2,)"), 8), "big-endian");
  expectRejected(npyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8),
                 "structured dtypes are not supported");
}

// Every 2^16 pattern, as an array of `dtype`.
Array allPatterns(Dtype dtype) {
  Array a;
  a.shape = {256, 256};
  a.dtype = dtype;
  for (uint32_t v = 0; v < 65536; ++v)
    a.bits.push_back(static_cast<uint16_t>(v));
  return a;
}

TEST(Npy, RoundTripsEvery16BitPatternBitForBit) {
  for (Dtype dtype : {Dtype::F16, Dtype::BF16, Dtype::U16, Dtype::I16}) {
    SCOPED_TRACE(describe(dtype));
    Array a = allPatterns(dtype);
    std::string bytes = serialize(a);
    EXPECT_EQ((bytes.size() - 65536 * 2) % 64, 0u);
    EXPECT_EQ(bytes.substr(bytes.size() - 65536 * 2),
              std::string(reinterpret_cast<const char *>(a.bits.data()), 65536 * 2));
    Array b = parse(bytes, "all.npy", Accept::Any);
    EXPECT_EQ(b.dtype, dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_TRUE(b.data.empty());
    EXPECT_EQ(b.bits, a.bits); // NaN payloads and signalling NaNs included
    EXPECT_EQ(serialize(b), bytes);
  }
}

TEST(Npy, SixteenBitFilesAreByteForByteWhatNumpyWrites) {
  // np.save of a (2, 3) array: numpy.float16 writes '<f2'; an
  // ml_dtypes.bfloat16 array '<V2' (its dtype.str), numpy's header padded to
  // 128 bytes.
  for (auto [dtype, descr] : {std::pair{Dtype::F16, "<f2"}, std::pair{Dtype::BF16, "<V2"},
                              std::pair{Dtype::U16, "<u2"}, std::pair{Dtype::I16, "<i2"}}) {
    std::string dict = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (2, 3), }";
    std::string numpy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                        std::string(128 - 10 - dict.size() - 1, ' ') + "\n" +
                        std::string("\x00\x00\x80\x3f\x01\x00\xc0\xff\x00\x80\x80\x7f", 12);
    Array a{{2, 3}, {}, dtype, {0x0000, 0x3f80, 0x0001, 0xffc0, 0x8000, 0x7f80}};
    EXPECT_EQ(serialize(a), numpy) << descr;
    EXPECT_EQ(npy::descr(dtype), descr);
  }
}

TEST(Npy, RoundTripsA16BitFile) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("lanejit_npy_test_bf16_" + std::to_string(::getpid()) + ".npy"))
                         .string();
  Array a{{2}, {}, Dtype::BF16, {0x3f80, 0x7fc1}};
  write(path, a);
  Array b = read(path, Accept::Any);
  std::string message = readError(path); // the default: float32 only
  std::remove(path.c_str());
  EXPECT_EQ(b.dtype, Dtype::BF16);
  EXPECT_EQ(b.bits, a.bits);
  EXPECT_NE(message.find("dtype '<V2' is not supported; only float32 ('<f4')"), std::string::npos)
      << message;
}

TEST(Npy, AcceptsEachSupportedDtypeWhenAskedTo) {
  const std::pair<std::string, Dtype> accepted[] = {
      {"<f4", Dtype::F32}, {"<f2", Dtype::F16},  {"<V2", Dtype::BF16},
      {"|V2", Dtype::BF16}, {"<u2", Dtype::U16}, {"<i2", Dtype::I16},
      {"|i1", Dtype::I8}};
  for (const auto &[descr, dtype] : accepted) {
    SCOPED_TRACE(descr);
    size_t width = dtype == Dtype::F32 ? 4 : dtype == Dtype::I8 ? 1 : 2;
    std::string bytes = npyBytes(dict(descr, "False", "(2, 3)"), 6 * width);
    bytes.replace(bytes.size() - width, 1, "\x7f"); // a nonzero byte in the last element
    Array a = parse(bytes, "ok.npy", Accept::Any);
    EXPECT_EQ(a.dtype, dtype);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.data.size(), dtype == Dtype::F32 ? 6u : 0u);
    EXPECT_EQ(a.bits.size(), dtype == Dtype::F32 || dtype == Dtype::I8 ? 0u : 6u);
    EXPECT_EQ(a.int8.size(), dtype == Dtype::I8 ? 6u : 0u);
    EXPECT_EQ(std::memcmp(a.raw(), bytes.data() + bytes.size() - 6 * width, 6 * width), 0);
    // Written back in the same form, except numpy's own void spelling: '<V2'.
    EXPECT_NE(serialize(a).find("'descr': '" + std::string(npy::descr(dtype)) + "'"),
              std::string::npos);
    EXPECT_EQ(npy::descr(dtype), descr == "|V2" ? "<V2" : descr);
    // Truncated data is measured in the dtype's element size.
    expectRejected(npyBytes(dict(descr, "False", "(2, 3)"), 6 * width - 1),
                   "needs " + std::to_string(6 * width) + " bytes", Accept::Any);
  }
}

TEST(Npy, TheDefaultAcceptsFloat32Only) {
  for (const char *descr : {"<f2", "<V2", "|V2", "<u2", "<i2", "|i1"})
    expectRejected(npyBytes(dict(descr, "False", "(2,)"), 4),
                   "dtype '" + std::string(descr) + "' is not supported; only float32 ('<f4')");
  // So a caller that indexes `data` never meets a 16-bit array.
  expectRejected(npyBytes(dict(">f2", "False", "(2,)"), 4), "only float32 ('<f4')");
}

TEST(Npy, RejectsOtherDtypesWhenAcceptingAny) {
  for (const char *descr : {"<f8", "<i4", "|u1", "<i1", "<V4", "|V1", "<c8", "|b1", "<U2",
                            "bfloat16", "<f4 ", "V2", "<e2"})
    expectRejected(npyBytes(dict(descr, "False", "(2,)"), 4),
                   "dtype '" + std::string(descr) +
                       "' is not supported; only float32 '<f4', float16 '<f2', bfloat16 "
                       "'<V2', uint16 '<u2', int16 '<i2' and int8 '|i1'",
                   Accept::Any);
  const std::pair<std::string, std::string> big_endian[] = {
      {">f4", "big-endian float32 ('>f4') is not supported; save as little-endian '<f4'"},
      {">f2", "big-endian float16 ('>f2') is not supported; save as little-endian '<f2'"},
      {">V2", "big-endian bfloat16 ('>V2') is not supported; save as little-endian '<V2'"},
      {">u2", "big-endian uint16 ('>u2') is not supported; save as little-endian '<u2'"},
      {">i2", "big-endian int16 ('>i2') is not supported; save as little-endian '<i2'"}};
  for (const auto &[descr, message] : big_endian)
    expectRejected(npyBytes(dict(descr, "False", "(2,)"), 4), message, Accept::Any);
  expectRejected(npyBytes(dict("<f2", "True", "(2, 3)"), 12), "Fortran-order", Accept::Any);
}

TEST(Npy, SerializeRefusesAnArrayWhoseElementsAreInTheWrongVector) {
  auto refuses = [](const Array &a) {
    try {
      serialize(a);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Io);
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refuses(Array{{2}, {1.0f, 2.0f}, Dtype::BF16, {}}));
  EXPECT_TRUE(refuses(Array{{2}, {}, Dtype::F32, {1, 2}}));
  EXPECT_TRUE(refuses(Array{{2}, {1.0f, 2.0f}, Dtype::F32, {1, 2}}));
  EXPECT_TRUE(refuses(Array{{2}, {}, Dtype::F16, {1}}));
  EXPECT_FALSE(refuses(Array{{2}, {}, Dtype::F16, {1, 2}}));
  Array int8{{2}, {}, Dtype::I8, {1, 2}}; // 16-bit elements in an int8 array
  EXPECT_TRUE(refuses(int8));
  int8.bits.clear();
  int8.int8 = {1, 2};
  EXPECT_FALSE(refuses(int8));
}

TEST(Npy, Int8FilesRoundTripEveryValueAsNumpyWritesThem) {
  // np.save(np.arange(-128, 128, dtype=np.int8).reshape(16, 16)): '|i1',
  // the header padded to 128 bytes.
  Array a;
  a.shape = {16, 16};
  a.dtype = Dtype::I8;
  for (int v = -128; v < 128; ++v)
    a.int8.push_back(static_cast<int8_t>(v));
  std::string dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (16, 16), }";
  std::string header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                       std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  std::string bytes = serialize(a);
  EXPECT_EQ(bytes.substr(0, 128), header);
  EXPECT_EQ(bytes.substr(128), std::string(reinterpret_cast<const char *>(a.int8.data()), 256));
  Array b = parse(bytes, "q.npy", Accept::Any);
  EXPECT_EQ(b.dtype, Dtype::I8);
  EXPECT_EQ(b.int8, a.int8);
  EXPECT_TRUE(b.data.empty() && b.bits.empty());
}

TEST(Npy, RejectsFortranOrder) {
  expectRejected(npyBytes(dict("<f4", "True", "(2, 3)"), 24), "Fortran-order");
}

TEST(Npy, RejectsTruncatedData) {
  expectRejected(npyBytes(dict("<f4", "False", "(2, 3)"), 20),
                 "truncated data: shape (2, 3) needs 24 bytes, file has 20");
}

TEST(Npy, RejectsTrailingBytes) {
  expectRejected(npyBytes(dict("<f4", "False", "(2,)"), 9), "1 unexpected bytes");
}

TEST(Npy, RejectsTruncatedHeaders) {
  std::string bytes = npyBytes(dict("<f4", "False", "(2,)"), 0);
  expectRejected(bytes.substr(0, 40), "truncated header");
}

TEST(Npy, RejectsMalformedHeaders) {
  expectRejected(npyBytes("{'descr': '<f4', 'shape': (2,), }", 8), "needs 'descr'");
  expectRejected(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8),
                 "malformed header");
  expectRejected(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8),
                 "malformed header");
  expectRejected(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8),
                 "malformed header");
  expectRejected(npyBytes(dict("<f4", "False", "(99999999999999999999,)"), 8), "too large");
}

TEST(Npy, EchoedHeaderTextIsEscapedOnOneLine) {
  // A key with a newline once split the message over two lines.
  expectRejected(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'a\nb': 'x'}", 8),
      "unexpected entry 'a\\nb'");
  // Terminal escapes and other control characters are shown, not sent.
  expectRejected(npyBytes(dict("\x1b[31m\x07<f4", "False", "(2,)"), 8),
                 "dtype '\\x1b[31m\\x07<f4' is not supported");
  expectRejected(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), '\t\r': 'x'}", 8),
      "unexpected entry '\\t\\r'");
}

TEST(Npy, LongHeaderTextIsCutShort) {
  // A 5 KB key or dtype is shown as its first 80 characters and "...".
  std::string key(5000, 'k'), descr(5000, 'd');
  std::string message = errorFor(
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), '" + key + "': 'x'}", 8));
  EXPECT_NE(message.find("unexpected entry '" + std::string(80, 'k') + "...'"), std::string::npos)
      << message;
  EXPECT_LT(message.size(), 200u) << message;
  message = errorFor(npyBytes(dict(descr, "False", "(2,)"), 8));
  EXPECT_NE(message.find("dtype '" + std::string(80, 'd') + "...'"), std::string::npos) << message;
  EXPECT_LT(message.size(), 200u) << message;
}

TEST(Npy, ReadRejectsADirectoryNamingIt) {
  std::string dir = std::filesystem::temp_directory_path().string();
  std::string message = readError(dir);
  EXPECT_EQ(message, dir + ": is a directory, not a .npy file");
  expectPrintableLine(message);
}

TEST(Npy, ReadRejectsDevicesNamingThem) {
  // /dev/zero would read forever; /dev/null would read as empty.
  EXPECT_EQ(readError("/dev/zero"), "/dev/zero: is not a regular file");
  EXPECT_EQ(readError("/dev/null"), "/dev/null: is not a regular file");
}

TEST(Npy, FileNamesWithControlCharactersStayOnOneLine) {
  std::string message = readError("/nonexistent/lanejit/a\nb.npy");
  EXPECT_EQ(message.rfind("/nonexistent/lanejit/a\\nb.npy: cannot open", 0), 0u) << message;
  expectPrintableLine(message);
}

TEST(Npy, ReportsMissingFiles) {
  try {
    read("/nonexistent/lanejit/x.npy");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/lanejit/x.npy: cannot open", 0), 0u)
        << e.what();
  }
}

} // namespace
} // namespace lanejit::npy
