// Programs from Python: Dim, Expr with Python operators, the builder, the
// text form and the library (include/lanejit/{dim,ir,dsl,text,library}.h).
#include "bindings.h"

#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <pybind11/functional.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

namespace lanejit::python {
namespace {

// A Python number next to an Expr takes the Expr's type (as in C++). Next
// to an f32 it is rounded to f32 (Python has no float literal to write the
// exact value with, as C++'s 1e-5f); next to an i32 it must be an integer.
Expr toExpr(py::handle value, const Expr &like) {
  if (py::isinstance<Expr>(value))
    return value.cast<Expr>();
  if (PyBool_Check(value.ptr()))
    throw py::type_error("lanejit: a bool is not an expression operand; compare expressions");
  if (PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr()))
    return like && like->type != DType::F32 ? literalLike(like, value.cast<double>())
                                            : constant(static_cast<float>(value.cast<double>()));
  throw py::type_error(std::string("lanejit: expected an Expr or a number, got ") +
                       Py_TYPE(value.ptr())->tp_name);
}

// A buffer's element type by its text-format name.
DType bufferType(const std::string &dtype) {
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::I8})
    if (dtype == name(t))
      return t;
  throw Error(Error::Kind::Verify, "dtype '" + dtype + "': buffers hold f32, bf16, f16 or i8");
}

// A slice bound: an int, a Dim, or None (the start or the end).
Dim toDim(py::handle value, Dim if_none) {
  if (value.is_none())
    return if_none;
  return value.cast<Dim>();
}

// x[a:b] or x[:, a:b]: columns [a, b) of a column vector.
Expr columnSlice(const Expr &x, py::object key) {
  if (PyTuple_Check(key.ptr())) {
    py::tuple t = key.cast<py::tuple>();
    if (t.size() != 2 || !PySlice_Check(t[0].ptr()) || !t[0].attr("start").is_none() ||
        !t[0].attr("stop").is_none())
      throw py::index_error("lanejit: index an Expr as x[a:b] or x[:, a:b] (a column range)");
    key = t[1];
  }
  if (!PySlice_Check(key.ptr()))
    throw py::index_error("lanejit: index an Expr with a column range, x[a:b]");
  if (!key.attr("step").is_none())
    throw py::index_error("lanejit: column ranges have no step");
  if (!x || x->rowUniform())
    throw py::index_error("lanejit: only a column vector can be sliced");
  return x.cols(toDim(key.attr("start"), Dim(0)), toDim(key.attr("stop"), *x->len));
}

std::string describe(const Expr &e) {
  if (!e)
    return "Expr(null)";
  std::string s = "Expr(" + std::string(name(e->kind)) + ", " + std::string(name(e->type));
  s += e->rowUniform() ? ", row-uniform)" : ", len " + e->len->str() + ")";
  return s;
}

} // namespace

void defineProgram(py::module_ &m) {
  py::class_<Dim>(m, "Dim", "A column extent (a*C + b)/d, exact in the symbolic column count C")
      .def(py::init<int64_t>())
      .def_static("affine", &Dim::affine, py::arg("a"), py::arg("b"), py::arg("d") = 1)
      .def("evaluate", &Dim::evaluate, py::arg("C"))
      .def(py::self + py::self)
      .def(py::self - py::self)
      .def("__add__", [](const Dim &a, int64_t b) { return a + Dim(b); })
      .def("__radd__", [](const Dim &a, int64_t b) { return Dim(b) + a; })
      .def("__sub__", [](const Dim &a, int64_t b) { return a - Dim(b); })
      .def("__rsub__", [](const Dim &a, int64_t b) { return Dim(b) - a; })
      .def("__mul__", [](const Dim &a, int64_t k) { return a * k; })
      .def("__rmul__", [](const Dim &a, int64_t k) { return a * k; })
      .def("__truediv__", [](const Dim &a, int64_t k) { return a / k; })
      .def("__floordiv__", [](const Dim &a, int64_t k) { return a / k; })
      .def("__eq__", [](const Dim &a, const Dim &b) { return a == b; })
      .def("__hash__", &Dim::hash)
      .def("__str__", &Dim::str)
      .def("__repr__", [](const Dim &d) { return "Dim(" + d.str() + ")"; });
  py::implicitly_convertible<py::int_, Dim>();
  m.attr("C") = Dim::C();

  py::class_<Expr> expr(m, "Expr", "A node of a row program (ir.h); build with the operators");
  expr.def_property_readonly("dtype", [](const Expr &e) { return std::string(name(e->type)); })
      .def_property_readonly("row_uniform", [](const Expr &e) { return e->rowUniform(); })
      .def_property_readonly("len", [](const Expr &e) { return e->len; })
      .def("cols", &Expr::cols, py::arg("begin"), py::arg("end"))
      .def("__getitem__", &columnSlice)
      .def("__repr__", &describe)
      .def("__neg__", [](const Expr &a) { return -a; })
      .def("__invert__", [](const Expr &a) { return logicalNot(a); })
      .def("__bool__", [](const Expr &) -> bool {
        throw py::type_error("lanejit: an Expr has no truth value; use lanejit.select, & and |");
      });
  // Binary operators with an Expr or a number on either side.
#define LANEJIT_PY_BINARY(PY, EXPR)                                                                \
  expr.def("__" PY "__", [](const Expr &a, py::handle b) {                                         \
    Expr rhs = toExpr(b, a);                                                                       \
    return EXPR(a, rhs);                                                                           \
  });                                                                                              \
  expr.def("__r" PY "__", [](const Expr &a, py::handle b) {                                        \
    Expr lhs = toExpr(b, a);                                                                       \
    return EXPR(lhs, a);                                                                           \
  });
#define LANEJIT_OP(OP) [](const Expr &x, const Expr &y) { return x OP y; }
  LANEJIT_PY_BINARY("add", LANEJIT_OP(+))
  LANEJIT_PY_BINARY("sub", LANEJIT_OP(-))
  LANEJIT_PY_BINARY("mul", LANEJIT_OP(*))
  LANEJIT_PY_BINARY("truediv", LANEJIT_OP(/))
  LANEJIT_PY_BINARY("mod", LANEJIT_OP(%))
  LANEJIT_PY_BINARY("and", LANEJIT_OP(&&))
  LANEJIT_PY_BINARY("or", LANEJIT_OP(||))
#undef LANEJIT_PY_BINARY
  // Comparisons (Python reflects them itself: 1 < x calls x.__gt__(1)).
  expr.def("__lt__", [](const Expr &a, py::handle b) { return a < toExpr(b, a); })
      .def("__le__", [](const Expr &a, py::handle b) { return a <= toExpr(b, a); })
      .def("__gt__", [](const Expr &a, py::handle b) { return a > toExpr(b, a); })
      .def("__ge__", [](const Expr &a, py::handle b) { return a >= toExpr(b, a); });
#undef LANEJIT_OP
  // == and != stay Python's identity tests (an Expr is hashable); the
  // elementwise ones are lanejit.eq / lanejit.ne.

  // Two-operand functions accept numbers on either side, typed like the Expr.
  auto pair = [](py::handle a, py::handle b) {
    Expr like = py::isinstance<Expr>(a)   ? a.cast<Expr>()
                : py::isinstance<Expr>(b) ? b.cast<Expr>()
                                          : Expr();
    return std::pair{toExpr(a, like), toExpr(b, like)};
  };
  m.def("eq", [pair](py::handle a, py::handle b) {
    auto [x, y] = pair(a, b);
    return eq(x, y);
  });
  m.def("ne", [pair](py::handle a, py::handle b) {
    auto [x, y] = pair(a, b);
    return ne(x, y);
  });
  m.def("minimum", [pair](py::handle a, py::handle b) {
    auto [x, y] = pair(a, b);
    return min(x, y);
  });
  m.def("maximum", [pair](py::handle a, py::handle b) {
    auto [x, y] = pair(a, b);
    return max(x, y);
  });
  m.def(
      "select",
      [pair](const Expr &cond, py::handle a, py::handle b) {
        auto [x, y] = pair(a, b);
        return select(cond, x, y);
      },
      py::arg("cond"), py::arg("a"), py::arg("b"));
  m.def("fma", [](const Expr &a, py::handle b, py::handle c) {
    return fma(a, toExpr(b, a), toExpr(c, a));
  });
  m.def("logical_not", &logicalNot);
  m.def("abs", static_cast<Expr (*)(Expr)>(&lanejit::abs));
  m.def("exp", static_cast<Expr (*)(Expr)>(&lanejit::exp));
  m.def("log", static_cast<Expr (*)(Expr)>(&lanejit::log));
  m.def("sqrt", static_cast<Expr (*)(Expr)>(&lanejit::sqrt));
  m.def("rsqrt", &rsqrt);
  m.def("tanh", static_cast<Expr (*)(Expr)>(&lanejit::tanh));
  m.def("sigmoid", &sigmoid);
  m.def("erf", static_cast<Expr (*)(Expr)>(&lanejit::erf));
  m.def("tof32", &toF32);
  m.def("toi32", &toI32);
  m.def("sum", &sum);
  m.def("mean", &mean);
  m.def("rowmax", &rowmax);
  m.def("rowmin", &rowmin);
  // Per run of g columns (a vector g times shorter) and back (dsl.h).
  m.def("groupsum", &groupsum, py::arg("x"), py::arg("g"),
        "Sum of each run of g columns, left to right: x[:, j*g:j*g+g] -> column j");
  m.def("groupmean", &groupmean, py::arg("x"), py::arg("g"), "Mean of each run of g columns");
  m.def("groupmax", &groupmax, py::arg("x"), py::arg("g"), "Max of each run of g columns");
  m.def("groupmin", &groupmin, py::arg("x"), py::arg("g"), "Min of each run of g columns");
  m.def("repeat", &lanejit::repeat, py::arg("v"), py::arg("g"),
        "Each column of v g times: the inverse shape of the group reductions");
  m.def("constant", &constant, py::arg("value"));
  m.def("constant_i32", &constantI32, py::arg("value"));
  m.def("row", &row);
  m.def("dim", &dim, py::arg("d"));
  m.def("col", &col, py::arg("len") = Dim::C(), py::arg("begin") = Dim(0));

  py::class_<Program>(m, "Program", "A row program: named inputs to named outputs, row by row")
      .def_readonly("name", &Program::name)
      .def_property_readonly(
          "inputs",
          [](const Program &p) {
            py::list l;
            for (const Param &d : p.inputs)
              l.append(py::make_tuple(d.name, std::string(name(d.kind)),
                                      d.kind == ParamKind::Scalar ? py::none() : py::cast(d.cols)));
            return l;
          },
          "(name, kind, cols) per input; kind is 'row tensor', 'column vector' or 'scalar'")
      .def_property_readonly("outputs",
                             [](const Program &p) {
                               py::list l;
                               for (const Output &o : p.outputs)
                                 l.append(py::make_tuple(o.name, o.cols));
                               return l;
                             })
      .def_property_readonly(
          "input_dtypes",
          [](const Program &p) {
            std::vector<std::string> l;
            for (const Param &d : p.inputs)
              l.emplace_back(name(d.type));
            return l;
          },
          "the element type per input: 'f32', 'bf16', 'f16' or 'i8'")
      .def_property_readonly(
          "output_dtypes",
          [](const Program &p) {
            std::vector<std::string> l;
            for (const Output &o : p.outputs)
              l.emplace_back(name(o.type));
            return l;
          },
          "the element type per output: 'f32', 'bf16', 'f16' or 'i8'")
      .def("hash", &Program::hash)
      .def("__str__", [](const Program &p) { return print(p); })
      .def("__repr__", [](const Program &p) { return "<lanejit.Program " + p.name + ">"; });

  py::class_<ProgramBuilder>(m, "Builder", "Captures a row program (dsl.h)")
      .def(py::init<std::string>(), py::arg("name"))
      .def(
          "rows",
          [](ProgramBuilder &b, const std::string &name, Dim cols, const std::string &dtype) {
            return b.rows(name, cols, bufferType(dtype));
          },
          py::arg("name"), py::arg("cols") = Dim::C(), py::arg("dtype") = "f32")
      .def(
          "columns",
          [](ProgramBuilder &b, const std::string &name, Dim cols, const std::string &dtype) {
            return b.columns(name, cols, bufferType(dtype));
          },
          py::arg("name"), py::arg("cols") = Dim::C(), py::arg("dtype") = "f32")
      .def(
          "scalar",
          [](ProgramBuilder &b, const std::string &name, const std::string &dtype) {
            return b.scalar(name, bufferType(dtype));
          },
          py::arg("name"), py::arg("dtype") = "f32")
      .def(
          "write",
          [](ProgramBuilder &b, const std::string &out, Dim begin, py::handle value, Dim cols,
             const std::string &dtype) {
            b.write(out, begin, toExpr(value, Expr()), cols, bufferType(dtype));
          },
          py::arg("output"), py::arg("begin"), py::arg("value"), py::arg("cols") = Dim::C(),
          py::arg("dtype") = "f32")
      .def(
          "output",
          [](ProgramBuilder &b, const std::string &name, const Expr &value,
             const std::string &dtype) { b.output(name, value, bufferType(dtype)); },
          py::arg("name"), py::arg("value"), py::arg("dtype") = "f32")
      .def("build", &ProgramBuilder::build);

  m.def(
      "parse", [](std::string_view text, std::string_view source) { return parse(text, source); },
      py::arg("text"), py::arg("source_name") = "<input>");
  m.def("parse_file", &parseFile, py::arg("path"));
  m.def(
      "print", [](const Program &p) { return print(p); }, py::arg("program"),
      "The canonical text form (docs/text-format.md)");
  m.def(
      "with_storage",
      [](const Program &p, const std::string &dtype) { return withStorage(p, bufferType(dtype)); },
      py::arg("program"), py::arg("dtype"),
      "The program with every f32, bf16 and f16 input and output stored as dtype ('bf16', "
      "'f16' or 'f32') instead (i8 buffers stay i8); values and operations unchanged "
      "(docs/element-types.md)");

  py::module_ lib = m.def_submodule(
      "library", "The six operators and int8 quantization as ready programs (library.h)");
  lib.def("rope", &library::rope);
  lib.def("layernorm", &library::layerNorm);
  lib.def("swiglu", &library::swiglu);
  lib.def("rmsnorm", &library::rmsNorm);
  lib.def("gelu_residual", &library::geluResidual);
  lib.def("masked_softmax", &library::maskedSoftmax);
  lib.def("names", [] {
    std::vector<std::string> n;
    for (const auto &e : library::all())
      n.push_back(e.name);
    return n;
  });
  // quantize_q8(), rmsnorm_q8(), ...: every quantizing entry by its name,
  // so an entry added to library::quantizing() is there without a binding.
  for (const library::Entry &e : library::quantizing())
    lib.def(e.name.c_str(), e.make,
            ("The library's " + e.name + " program (library.h, docs/python.md)").c_str());
  lib.def("quantizing", [] {
    std::vector<std::string> n;
    for (const auto &e : library::quantizing())
      n.push_back(e.name);
    return n;
  });
  lib.def("by_name", &library::byName, py::arg("name"),
          "any entry of names() or quantizing()");
  // The C++ function itself on the Python Builder (a ProgramBuilder), so
  // the program is the one C++ builds, hash for hash.
  lib.def(
      "quantize_rows",
      [](ProgramBuilder &b, const Expr &y, const std::string &values, const std::string &scales) {
        library::quantizeRows(b, y, values, scales);
      },
      py::arg("builder"), py::arg("y"), py::arg("values") = "q", py::arg("scales") = "scale",
      "Appends symmetric int8 quantization of each row of y: output `values` (i8, y's "
      "columns) = y * (127 / max|y|) rounded to nearest-even and saturated to +-127 (NaN as "
      "0; 0 where max|y| = 0), output `scales` (f32 [R, 1]) = max|y| / 127");
  lib.def(
      "quantize_blocks",
      [](ProgramBuilder &b, const Expr &y, const std::string &values, const std::string &scales,
         int64_t block) { library::quantizeBlocks(b, y, values, scales, block); },
      py::arg("builder"), py::arg("y"), py::arg("values") = "q", py::arg("scales") = "scale",
      py::arg("block") = 32,
      "Appends per-block int8 quantization of y (ggml's Q8_0 for block=32): output `values` "
      "(i8, y's columns) = y * (127 / max|y[block]|) rounded and saturated as quantize_rows, "
      "output `scales` (f16 [R, C/block]) = max|y[block]| / 127; C must divide by block");
}

} // namespace lanejit::python
