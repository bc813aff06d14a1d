// aot::build: the JIT's object plus a C header describing its entry.
#include <lanejit/aot.h>

#include <lanejit/error.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/launch_abi.h>

#include "lower/plan.h"

#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <sstream>

namespace lanejit::aot {
namespace {

std::string identifier(const std::string &name) {
  std::string id;
  for (char c : name)
    id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return id;
}

// The "+feature" half of the feature string, wrapped for a C comment.
std::string requiredFeatures(const std::string &features) {
  std::stringstream in(features);
  std::string item, out, line;
  while (std::getline(in, item, ','))
    if (item.size() > 1 && item[0] == '+') {
      if (line.size() + item.size() > 70) {
        out += " *   " + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + item;
    }
  if (!line.empty())
    out += " *   " + line + "\n";
  return out;
}

std::string bufferTable(const Program &p) {
  std::string rows;
  size_t index = 0;
  for (const Param &in : p.inputs) {
    std::string shape = in.kind == ParamKind::RowTensor   ? "[rows, " + in.cols.str() + "]"
                        : in.kind == ParamKind::ColVector ? "[" + in.cols.str() + "]"
                                                          : "[1]";
    rows += fmt::format(" *   [{}] {:<10} input   {:<4} {:<13} {}\n", index++, in.name,
                        std::string(name(in.type)), std::string(name(in.kind)), shape);
  }
  for (const Output &out : p.outputs)
    rows += fmt::format(" *   [{}] {:<10} output  {:<4} {:<13} [rows, {}]\n", index++, out.name,
                        std::string(name(out.type)), "row tensor", out.cols.str());
  return rows;
}

// lanejit_launch_args exactly as lanejit/launch_abi.h defines it (one field
// list, stringified), plus asserts pinning the offsets this object's code
// loads from, so a caller compiled with any other layout does not build.
#define LANEJIT_AOT_TEXT_(...) #__VA_ARGS__
#define LANEJIT_AOT_TEXT(...) LANEJIT_AOT_TEXT_(__VA_ARGS__)

std::string launchArgsDefinition() {
  std::string fields;
  std::stringstream in(LANEJIT_AOT_TEXT(LANEJIT_LAUNCH_ARGS_FIELDS));
  std::string field;
  while (std::getline(in >> std::ws, field, ';'))
    fields += "  " + field + ";\n";
  std::string asserts;
  auto pin = [&](const char *what, size_t value) {
    asserts +=
        fmt::format("LANEJIT_ABI_ASSERT({} == {}, \"lanejit_launch_args layout\");\n", what, value);
  };
  pin("offsetof(lanejit_launch_args, buffers)", offsetof(LaunchArgs, buffers));
  pin("offsetof(lanejit_launch_args, row_strides)", offsetof(LaunchArgs, row_strides));
  pin("offsetof(lanejit_launch_args, rows)", offsetof(LaunchArgs, rows));
  pin("offsetof(lanejit_launch_args, cols)", offsetof(LaunchArgs, cols));
  pin("offsetof(lanejit_launch_args, workspace)", offsetof(LaunchArgs, workspace));
  pin("sizeof(lanejit_launch_args)", sizeof(LaunchArgs));
  return fmt::format(R"(#ifndef LANEJIT_LAUNCH_ARGS_DEFINED
#define LANEJIT_LAUNCH_ARGS_DEFINED
/* The layout of lanejit/launch_abi.h (lanejit::LaunchArgs). */
typedef struct lanejit_launch_args {{
{}}} lanejit_launch_args;
#endif

#ifndef LANEJIT_ABI_ASSERT
#ifdef __cplusplus
#define LANEJIT_ABI_ASSERT(cond, message) static_assert(cond, message)
#else
#define LANEJIT_ABI_ASSERT(cond, message) _Static_assert(cond, message)
#endif
#endif
{})",
                     fields, asserts);
}

// A slot's Dim as a C expression of `C`; the caller guarantees it is a
// non-negative integer, so C's truncating division computes it exactly.
std::string cExpression(const Dim &d) {
  std::string text = d.coeff() == 0 ? "" : d.coeff() == 1 ? "C" : fmt::format("{} * C", d.coeff());
  if (text.empty())
    text = fmt::format("{}", d.offset());
  else if (d.offset() > 0)
    text += fmt::format(" + {}", d.offset());
  else if (d.offset() < 0)
    text += fmt::format(" - {}", uint64_t{0} - static_cast<uint64_t>(d.offset()));
  return d.denom() == 1 ? text : fmt::format("({}) / {}", text, d.denom());
}

// Kernel::workspaceFloats as a C function: the rule of lower::workspaceFloats
// (each slot rounded up to kWorkspaceAlign floats, packed in order).
std::string workspaceFunction(const Kernel &kernel, const std::string &id) {
  static_assert(lower::kWorkspaceAlign * sizeof(float) == LANEJIT_WORKSPACE_ALIGN_BYTES);
  std::string terms;
  for (const Dim &slot : kernel.workspaceSlots())
    terms += fmt::format("{}(({} + {}) / {} * {})", terms.empty() ? "" : "\n       + ",
                         cExpression(slot), lower::kWorkspaceAlign - 1, lower::kWorkspaceAlign,
                         lower::kWorkspaceAlign);
  return fmt::format("static inline int64_t lanejit_{}_workspace_floats(int64_t C) {{\n{}}}\n", id,
                     terms.empty() ? "  (void)C;\n  return 0;\n" : "  return " + terms + ";\n");
}

// The slots in words, as lines of the header's comment.
std::string workspaceDescription(const Kernel &kernel) {
  const std::vector<Dim> &slots = kernel.workspaceSlots();
  std::string text = "This kernel's workspace: none.";
  if (!slots.empty()) {
    std::vector<std::string> sizes;
    for (const Dim &slot : slots)
      sizes.push_back(slot.str());
    text = fmt::format("This kernel's workspace: {} slot{} of {} floats, each rounded up to a "
                       "multiple of {}.",
                       slots.size(), slots.size() == 1 ? "" : "s", fmt::join(sizes, ", "),
                       lower::kWorkspaceAlign);
  }
  std::stringstream words(text);
  std::string word, out, line;
  while (words >> word) {
    if (!line.empty() && line.size() + word.size() > 70) {
      out += " * " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + " * " + line + "\n";
}

std::string makeHeader(const Kernel &kernel, const std::vector<std::string> &imports) {
  const Program &p = kernel.program();
  const CompileReport &s = kernel.report();
  std::string id = identifier(p.name);
  std::string guard = "LANEJIT_AOT_" + id + "_H";
  for (char &c : guard)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string importText = imports.empty() ? "none" : fmt::format("{}", fmt::join(imports, ", "));
  return fmt::format(
      R"(/* lanejit AOT kernel '{name}': generated by `lanejit aot`, do not edit.
 *
 * Link the object beside this header into any C/C++ program; it needs no
 * LLVM and imports only: {imports}.
 * Compiled for CPU {cpu}, {lanes} lanes, full-packet specialization {spec};
 * it runs only on CPUs with these features:
{features} *
 * {entry}(&args, row_begin, row_end) computes rows [row_begin, row_end).
 * args.buffers[i] and args.row_strides[i] (in elements), in this order
 * (f32: float; bf16 and f16: their 16-bit patterns, as uint16_t; i8: int8_t):
{table} *
 * args.rows = R, args.cols = C, and args.workspace points to
 * lanejit_{id}_workspace_floats(C) floats, 64-byte aligned, not shared
 * with a concurrent call; it may be NULL when that count is 0.
{workspace} *
 * Threads: rows are independent, so a caller parallelises the entry by
 * row ranges: split [0, R) into disjoint ranges (contiguous blocks of, say,
 * 32 rows or more) and let each thread call the entry on its ranges with
 * its own copy of args whose workspace is its own; buffers and strides may
 * be shared. The output is bit for bit the same for any split.
 *
 * The entry checks nothing. The caller guarantees what Kernel::run checks:
 * non-null buffers of the types and shapes above for args.cols = C, every column
 * count above a non-negative integer for that C, row strides >= the
 * columns, no two outputs overlapping, and no input overlapping an output.
 */
#ifndef {guard}
#define {guard}

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

{launch_args}
void {entry}(const lanejit_launch_args *args, int64_t row_begin, int64_t row_end);

/* Floats of workspace a call with args.cols = C needs. */
{workspace_function}
/* A name without the per-process counter, and the buffer count. */
#define lanejit_{id}_entry {entry}
#define LANEJIT_{upper}_BUFFERS {buffers}

#ifdef __cplusplus
}}
#endif

#endif
)",
      fmt::arg("name", p.name), fmt::arg("imports", importText), fmt::arg("cpu", s.cpu),
      fmt::arg("lanes", s.mapping.lanes),
      fmt::arg("spec", kernel.options().specialize_full_packets ? "on" : "off"),
      fmt::arg("features", requiredFeatures(s.features)), fmt::arg("entry", kernel.entrySymbol()),
      fmt::arg("table", bufferTable(p)), fmt::arg("guard", guard), fmt::arg("id", id),
      fmt::arg("upper", guard.substr(12, guard.size() - 14)),
      fmt::arg("buffers", p.inputs.size() + p.outputs.size()),
      fmt::arg("launch_args", launchArgsDefinition()),
      fmt::arg("workspace", workspaceDescription(kernel)),
      fmt::arg("workspace_function", workspaceFunction(kernel, id)));
}

} // namespace

void requireAllowedImports(std::string_view object, const std::string &what) {
  std::vector<std::string> bad = inspect::disallowedImports(inspect::inspectObject(object));
  if (!bad.empty())
    throw Error(Error::Kind::Compile,
                fmt::format("the object for '{}' imports {}; an AOT object may import only {}",
                            what, fmt::join(bad, ", "),
                            fmt::join(inspect::allowedImports(), ", ")));
}

Artifacts build(const Kernel &kernel) {
  Artifacts a;
  requireAllowedImports(kernel.object(), kernel.program().name);
  a.object = kernel.object();
  a.entry_symbol = kernel.entrySymbol();
  a.imports = inspect::inspectKernel(kernel).undefined;
  a.header = makeHeader(kernel, a.imports);
  return a;
}

} // namespace lanejit::aot
