// .npy reading and writing. The header is a Python dict literal; we parse the
// small subset NumPy writes rather than evaluating anything. Data is copied
// as stored, never converted. Files are written whole or not at all
// (io/staged_files.h).
#include "npy.h"

#include "io/staged_files.h"

#include <lanejit/error.h>

#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lanejit::npy {
namespace {

static_assert(std::endian::native == std::endian::little,
              ".npy data is copied as-is, which assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";

// `text` as it may appear in a one-line message: control characters
// escaped (\n, \t, \x1b), and with `header_text` also bytes outside ASCII
// (a header is ASCII) and anything past the first 80 characters, so that a
// 5 KB header or a terminal escape in a file is not echoed raw.
std::string printable(std::string_view text, bool header_text) {
  constexpr size_t kLimit = 80;
  std::string out;
  size_t shown = 0;
  for (char c : text) {
    if (header_text && shown == kLimit)
      return out + "...";
    auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (byte < 0x20 || byte == 0x7f || (header_text && byte >= 0x80))
      out += fmt::format("\\x{:02x}", byte);
    else
      out.push_back(c);
    ++shown;
  }
  return out;
}

// Every message is one line that starts with the file's name.
[[noreturn]] void fail(std::string_view source, const std::string &message) {
  throw Error(Error::Kind::Io, fmt::format("{}: {}", printable(source, false), message));
}

// Text from the header, quoted for a message.
std::string quoted(std::string_view header_text) {
  return "'" + printable(header_text, true) + "'";
}

// A value in the header dict: a string, a boolean or a tuple of integers.
struct Value {
  enum class Kind { String, Bool, Tuple } kind = Kind::String;
  std::string text;
  bool flag = false;
  std::vector<int64_t> items;
};

class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  // Calls on_entry(key, value) for every entry of the dict.
  template <typename F> void parseDict(F on_entry) {
    expect('{');
    while (!peekIs('}')) {
      std::string key = parseString();
      expect(':');
      Value value = parseValue();
      on_entry(key, value);
      if (!peekIs(','))
        break;
      ++pos_;
    }
    expect('}');
    skipSpace();
    if (pos_ != text_.size())
      malformed("unexpected text after the dict");
  }

private:
  [[noreturn]] void malformed(const std::string &what) {
    fail(source_, fmt::format("malformed header: {} at offset {}", what, pos_));
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }
  bool peekIs(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peekIs(c))
      malformed(fmt::format("expected '{}'", c));
    ++pos_;
  }
  bool consumeWord(std::string_view word) {
    skipSpace();
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }
  std::string parseString() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      malformed("expected a quoted string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos)
      malformed("unterminated string");
    std::string result(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return result;
  }
  int64_t parseInt() {
    skipSpace();
    int64_t value = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        malformed("dimension too large");
      value = value * 10 + digit;
    }
    if (pos_ == start)
      malformed("expected a non-negative integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 long suffix
      ++pos_;
    return value;
  }
  Value parseValue() {
    Value value;
    if (peekIs('\'') || peekIs('"')) {
      value.text = parseString();
      return value;
    }
    if (consumeWord("True") || consumeWord("False")) {
      value.kind = Value::Kind::Bool;
      value.flag = text_.substr(0, pos_).ends_with("True");
      return value;
    }
    if (peekIs('['))
      malformed("structured dtypes are not supported");
    expect('(');
    value.kind = Value::Kind::Tuple;
    while (!peekIs(')')) {
      value.items.push_back(parseInt());
      if (!peekIs(','))
        break;
      ++pos_;
    }
    expect(')');
    return value;
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
};

uint32_t readLittle(std::string_view bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i)
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return value;
}

// Element count, or a failure when the product overflows.
int64_t elementCount(const std::vector<int64_t> &shape, std::string_view source) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / 4 / d)
      fail(source, "shape too large");
    count *= d;
  }
  return count;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.size() == 1)
    return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

constexpr Dtype kDtypes[] = {Dtype::F32, Dtype::F16, Dtype::BF16,
                             Dtype::U16, Dtype::I16, Dtype::I8};

std::string_view typeName(Dtype dtype) {
  switch (dtype) {
  case Dtype::F32: return "float32";
  case Dtype::F16: return "float16";
  case Dtype::BF16: return "bfloat16";
  case Dtype::U16: return "uint16";
  case Dtype::I16: return "int16";
  case Dtype::I8: return "int8";
  }
  return "?";
}

size_t widthOf(Dtype dtype) {
  return dtype == Dtype::F32 ? sizeof(float) : dtype == Dtype::I8 ? 1 : sizeof(uint16_t);
}

// How many elements each of an array's vectors holds: the one of its
// dtype, and the others together (which must be none).
std::pair<size_t, size_t> heldAndOther(const Array &array) {
  size_t all = array.data.size() + array.bits.size() + array.int8.size();
  size_t held = array.dtype == Dtype::F32   ? array.data.size()
                : array.dtype == Dtype::I8 ? array.int8.size()
                                           : array.bits.size();
  return {held, all - held};
}

// The Dtype a header's descr names. NumPy spells 2-byte void '|V2' and
// ml_dtypes' bfloat16 '<V2': a bf16 file loaded with np.load and saved again
// comes back as '|V2', so both are bf16.
std::optional<Dtype> dtypeOf(std::string_view text) {
  if (text == "|V2")
    return Dtype::BF16;
  for (Dtype dtype : kDtypes)
    if (text == descr(dtype))
      return dtype;
  return std::nullopt;
}

// Refuses a descr the caller does not accept, with what it could have been.
Dtype acceptedDtype(const std::string &text, Accept accept, std::string_view source) {
  std::optional<Dtype> dtype = dtypeOf(text);
  if (dtype && (accept == Accept::Any || *dtype == Dtype::F32))
    return *dtype;
  if (text.size() == 3 && text[0] == '>') {
    std::optional<Dtype> little = dtypeOf("<" + text.substr(1));
    if (little && (accept == Accept::Any || *little == Dtype::F32))
      fail(source, fmt::format("big-endian {} ('{}') is not supported; save as little-endian '{}'",
                               typeName(*little), text, descr(*little)));
  }
  if (accept == Accept::Float32)
    fail(source, fmt::format("dtype {} is not supported; only float32 ('<f4')", quoted(text)));
  fail(source, fmt::format("dtype {} is not supported; only float32 '<f4', float16 '<f2', "
                           "bfloat16 '<V2', uint16 '<u2', int16 '<i2' and int8 '|i1'",
                           quoted(text)));
}

} // namespace

std::string_view descr(Dtype dtype) {
  switch (dtype) {
  case Dtype::F32: return "<f4";
  case Dtype::F16: return "<f2";
  case Dtype::BF16: return "<V2";
  case Dtype::U16: return "<u2";
  case Dtype::I16: return "<i2";
  case Dtype::I8: return "|i1";
  }
  return "?";
}

std::string describe(Dtype dtype) {
  return fmt::format("{} ('{}')", typeName(dtype), descr(dtype));
}

const void *Array::raw() const {
  if (dtype == Dtype::I8)
    return int8.data();
  return dtype == Dtype::F32 ? static_cast<const void *>(data.data()) : bits.data();
}

void *Array::raw() {
  if (dtype == Dtype::I8)
    return int8.data();
  return dtype == Dtype::F32 ? static_cast<void *>(data.data()) : bits.data();
}

int64_t Array::size() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

Array parse(std::string_view bytes, std::string_view source, Accept accept) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic)
    fail(source, "not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(source, fmt::format("unsupported .npy version {}.{}", major, minor));
  size_t width = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + width)
    fail(source, "truncated header");
  size_t header_length = readLittle(bytes, 8, width);
  size_t data_offset = 8 + width + header_length;
  if (bytes.size() < data_offset)
    fail(source, fmt::format("truncated header: {} bytes declared, {} present", header_length,
                             bytes.size() - 8 - width));

  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> shape;
  HeaderParser parser(bytes.substr(8 + width, header_length), source);
  parser.parseDict([&](const std::string &key, const Value &value) {
    if (key == "descr" && value.kind == Value::Kind::String)
      descr = value.text;
    else if (key == "fortran_order" && value.kind == Value::Kind::Bool)
      fortran = value.flag;
    else if (key == "shape" && value.kind == Value::Kind::Tuple)
      shape = value.items;
    else
      fail(source, fmt::format("malformed header: unexpected entry {}", quoted(key)));
  });
  if (!descr || !fortran || !shape)
    fail(source, "malformed header: needs 'descr', 'fortran_order' and 'shape'");
  Dtype dtype = acceptedDtype(*descr, accept, source);
  // One dimension or fewer reads the same in either order.
  if (*fortran && shape->size() > 1)
    fail(source, "Fortran-order arrays are not supported; save in C order");

  Array array;
  array.shape = *shape;
  array.dtype = dtype;
  int64_t count = elementCount(array.shape, source);
  size_t expected = static_cast<size_t>(count) * widthOf(dtype);
  size_t present = bytes.size() - data_offset;
  if (present < expected)
    fail(source, fmt::format("truncated data: shape {} needs {} bytes, file has {}",
                             shapeText(array.shape), expected, present));
  if (present > expected)
    fail(source, fmt::format("{} unexpected bytes after the data of shape {}", present - expected,
                             shapeText(array.shape)));
  if (dtype == Dtype::F32)
    array.data.resize(static_cast<size_t>(count));
  else if (dtype == Dtype::I8)
    array.int8.resize(static_cast<size_t>(count));
  else
    array.bits.resize(static_cast<size_t>(count));
  if (count > 0)
    std::memcpy(array.raw(), bytes.data() + data_offset, expected);
  return array;
}

Array read(const std::string &path, Accept accept) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before the check
  // below rejects it; it changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
  std::unique_ptr<int, void (*)(int *)> closer(&fd, [](int *f) { ::close(*f); });
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    fail(path, fmt::format("cannot read: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    fail(path, "is a directory, not a .npy file");
  if (!S_ISREG(st.st_mode))
    fail(path, "is not a regular file");
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail(path, fmt::format("cannot read: {}", std::strerror(errno)));
    if (n == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return parse(bytes, path, accept);
}

std::string serialize(const Array &array) {
  auto [held, other] = heldAndOther(array);
  if (static_cast<int64_t>(held) != array.size() || other != 0)
    throw Error(Error::Kind::Io,
                fmt::format("npy::serialize: shape {} needs {} {} values, array has {} (and {} "
                            "in its other vectors)",
                            shapeText(array.shape), array.size(), typeName(array.dtype), held,
                            other));
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr(array.dtype),
                  shapeText(array.shape));
  // NumPy pads the header with spaces and a newline so the data starts on a
  // 64-byte boundary.
  bool wide = header.size() + 1 + 10 > 0xffff;
  size_t prefix = wide ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::string out(kMagic);
  out.push_back(static_cast<char>(wide ? 2 : 1));
  out.push_back(0);
  for (size_t i = 0; i < (wide ? 4u : 2u); ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.append(static_cast<const char *>(array.raw()), held * widthOf(array.dtype));
  return out;
}

void write(const std::string &path, const Array &array) {
  io::writeFileAtomically(path, serialize(array));
}

} // namespace lanejit::npy
