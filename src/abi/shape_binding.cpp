// Binding caller buffers to declarations: infer (R, C), then check every
// buffer against what its declaration evaluates to. Runs on every call, so
// the success path allocates nothing; messages are built only on failure.
#include <lanejit/shape_binding.h>
#include <lanejit/error.h>

#include <cstdint>
#include <optional>

namespace lanejit {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw Error(Error::Kind::Bind, message);
}

// One buffer next to its declaration (inputs and outputs alike).
struct Slot {
  const BufferRef &buf;
  const std::string &name;
  ParamKind kind;
  const Dim &cols;
  bool output;
  DType type;

  std::string who() const { return std::string(output ? "output" : "input") + " '" + name + "'"; }
};

// Calls fn(slot) for every given buffer: inputs first, then outputs.
template <class Fn>
void forEachSlot(const Program &p, std::span<const BufferRef> inputs,
                 std::span<const BufferRef> outputs, Fn fn) {
  for (size_t i = 0; i < inputs.size(); ++i)
    fn(Slot{inputs[i], p.inputs[i].name, p.inputs[i].kind, p.inputs[i].cols, false,
            p.inputs[i].type});
  for (size_t i = 0; i < outputs.size(); ++i)
    fn(Slot{outputs[i], p.outputs[i].name, ParamKind::RowTensor, p.outputs[i].cols, true,
            p.outputs[i].type});
}

std::string nameList(const Program &p, bool outputs) {
  std::string list;
  size_t n = outputs ? p.outputs.size() : p.inputs.size();
  for (size_t i = 0; i < n; ++i)
    list += (i ? ", " : "") + (outputs ? p.outputs[i].name : p.inputs[i].name);
  return list;
}

void checkCount(const Program &p, size_t given, bool outputs) {
  size_t declared = outputs ? p.outputs.size() : p.inputs.size();
  if (given == declared)
    return;
  std::string what = outputs ? " output" : " input";
  fail("program '" + p.name + "' expects " + std::to_string(declared) + what +
       (declared == 1 ? " (" : "s (") + nameList(p, outputs) + "), got " + std::to_string(given));
}

// The value of `dim` at C, or the Error evaluateDim documents; `what` is
// built only when the check fails.
template <class What> int64_t evaluateOrFail(const Dim &dim, int64_t c, What what) {
  std::optional<int64_t> v = dim.evaluate(c);
  if (v && *v >= 0)
    return *v;
  return evaluateDim(dim, c, what());
}

// Whether any Dim the program uses depends on C (only asked when no buffer
// shows C, so the walk is off the common path).
std::optional<std::string> useOfC(const Program &p) {
  for (size_t i = 0; i < p.writes.size(); ++i)
    if (!p.writes[i].begin.isConstant() || !p.writes[i].len.isConstant())
      return "write #" + std::to_string(i);
  std::optional<std::string> use;
  int number = 0;
  forEachNode(p, [&](const Expr &e) {
    bool dependent = !e->begin.isConstant() || (e->len && !e->len->isConstant());
    if (dependent && !use)
      use = "%" + std::to_string(number);
    ++number;
  });
  return use;
}

int64_t inferC(const Program &p, std::span<const BufferRef> inputs,
               std::span<const BufferRef> outputs) {
  std::optional<int64_t> c;
  forEachSlot(p, inputs, outputs, [&](const Slot &s) {
    if (c || s.kind == ParamKind::Scalar || s.cols.isConstant())
      return;
    c = s.cols.solveFor(s.buf.cols);
    if (!c || *c < 0)
      fail(s.who() + ": " + std::to_string(s.buf.cols) + " columns do not match " + s.cols.str() +
           " for any integer C >= 0");
  });
  if (c)
    return *c;
  if (std::optional<std::string> use = useOfC(p))
    fail("cannot infer C: no buffer's column count depends on C, but " + *use + " uses C");
  return 0; // nothing depends on C
}

int64_t inferR(const Program &p, std::span<const BufferRef> inputs,
               std::span<const BufferRef> outputs) {
  std::optional<int64_t> r;
  forEachSlot(p, inputs, outputs, [&](const Slot &s) {
    if (r || s.kind != ParamKind::RowTensor)
      return;
    if (s.buf.rows < 0)
      fail(s.who() + ": negative row count " + std::to_string(s.buf.rows));
    r = s.buf.rows;
  });
  if (!r)
    fail("program '" + p.name +
         "': cannot infer the row count R (no row tensor input, and no "
         "outputs given)");
  return *r;
}

void checkSlot(const Slot &s, Shape shape) {
  const BufferRef &b = s.buf;
  if (s.kind == ParamKind::Scalar) {
    if (!b.data)
      fail(s.who() + ": null data pointer");
    return;
  }
  int64_t cols = evaluateOrFail(s.cols, shape.cols, [&] { return s.who(); });
  if (s.kind == ParamKind::ColVector) {
    if (b.rows != 1 || b.cols != cols)
      fail(s.who() + ": expected a column vector of 1 x " + std::to_string(cols) +
           " columns, got " + std::to_string(b.rows) + " x " + std::to_string(b.cols));
  } else {
    if (b.rows != shape.rows || b.cols != cols)
      fail(s.who() + ": expected " + std::to_string(shape.rows) + " x " + std::to_string(cols) +
           " columns, got " + std::to_string(b.rows) + " x " + std::to_string(b.cols));
    if (b.stride() < b.cols)
      fail(s.who() + ": row stride " + std::to_string(b.stride()) + " is smaller than its " +
           std::to_string(b.cols) + " columns");
  }
  if (!b.data && b.rows > 0 && b.cols > 0)
    fail(s.who() + ": null data pointer");
  byteSpan(b, b.rows, bytesOf(s.type), s.who());
}

} // namespace

int64_t byteSpan(const BufferRef &b, int64_t rows, int64_t elementBytes, std::string_view who) {
  if (rows <= 0 || b.cols <= 0)
    return 0;
  // (rows - 1) * stride + cols elements, then bytes, then the end address:
  // each step checked, since a wrapped span would pass the overlap checks
  // and the kernel's row offsets would wrap the same way.
  int64_t elements = 0, bytes = 0;
  uintptr_t end = 0;
  if (__builtin_mul_overflow(rows - 1, b.stride(), &elements) ||
      __builtin_add_overflow(elements, b.cols, &elements) ||
      __builtin_mul_overflow(elements, elementBytes, &bytes) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(b.data), static_cast<uint64_t>(bytes),
                             &end))
    fail(std::string(who) + ": " + std::to_string(rows) + " rows of " + std::to_string(b.cols) +
         " columns with row stride " + std::to_string(b.stride()) +
         " span more bytes than the address space holds");
  return bytes;
}

Shape bindShape(const Program &program, std::span<const BufferRef> inputs,
                std::span<const BufferRef> outputs) {
  checkCount(program, inputs.size(), false);
  if (!outputs.empty())
    checkCount(program, outputs.size(), true);
  Shape shape;
  shape.cols = inferC(program, inputs, outputs);
  shape.rows = inferR(program, inputs, outputs);
  forEachSlot(program, inputs, outputs, [&](const Slot &s) { checkSlot(s, shape); });
  // Writes split outputs at Dims such as C/2; each must be a whole column.
  for (size_t i = 0; i < program.writes.size(); ++i) {
    const Write &w = program.writes[i];
    auto what = [&] {
      bool known = w.output >= 0 && w.output < static_cast<int>(program.outputs.size());
      return "write #" + std::to_string(i) + " to output '" +
             (known ? program.outputs[w.output].name : "?") + "'";
    };
    evaluateOrFail(w.begin, shape.cols, what);
    evaluateOrFail(w.len, shape.cols, what);
  }
  return shape;
}

} // namespace lanejit
