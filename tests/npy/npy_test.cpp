// .npy reading and writing: round trips, and one test per class of bad file
// with the message it must produce.
#include "npy.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

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
std::string errorFor(const std::string &bytes) {
  try {
    parse(bytes, "bad.npy");
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

void expectRejected(const std::string &bytes, const std::string &phrase) {
  std::string message = errorFor(bytes);
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
