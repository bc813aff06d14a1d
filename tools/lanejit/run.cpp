// `lanejit run`: .npy files in, .npy files out. Shapes come from the files;
// every mismatch between the files and the program's declarations (rank,
// shape, element type) is an error that names the buffer and the file: data
// is never converted. Output paths are checked before anything runs, and the
// outputs are written whole or not at all. Which file dtypes each declared
// type takes: docs/element-types.md, "Files (lanejit run)".
#include "commands.h"

#include "npy.h"
#include "io/output_paths.h"
#include "io/staged_files.h"

#include <lanejit/element_types.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/shape_binding.h>

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <map>

namespace lanejit::cli {
namespace {

[[noreturn]] void usageError(const std::string &message) {
  throw Error(Error::Kind::Bind, message);
}

// NAME=FILE pairs, each name at most once.
std::map<std::string, std::string> parseBindings(const std::vector<std::string> &specs,
                                                 const std::string &flag) {
  std::map<std::string, std::string> result;
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      usageError(fmt::format("{} expects NAME=FILE.npy, got '{}'", flag, spec));
    std::string name = spec.substr(0, eq);
    if (!result.emplace(name, spec.substr(eq + 1)).second)
      usageError(fmt::format("{} given twice for '{}'", flag, name));
  }
  return result;
}

std::string declaredNames(const Program &program, bool inputs) {
  std::string names;
  auto add = [&](const std::string &name) { names += (names.empty() ? "" : ", ") + name; };
  if (inputs)
    for (const Param &p : program.inputs)
      add(p.name);
  else
    for (const Output &o : program.outputs)
      add(o.name);
  return names.empty() ? "none" : names;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.size() == 1)
    return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// The file dtype an output of `type` is written as: f16 as numpy's float16,
// bf16 as np.save writes an ml_dtypes.bfloat16 array, i8 as numpy's int8.
// Every DType is listed, so a new one is a -Wswitch warning here.
npy::Dtype fileDtype(DType type) {
  switch (type) {
  case DType::F16: return npy::Dtype::F16;
  case DType::BF16: return npy::Dtype::BF16;
  case DType::I8: return npy::Dtype::I8;
  case DType::F32:
  case DType::I32: // the verifier admits no i32 or bool buffer
  case DType::Bool: break;
  }
  return npy::Dtype::F32;
}

// Whether an input declared `type` takes a file of `dtype`. bf16 also takes
// its bit patterns as uint16 or int16, the form torch users can save.
bool accepts(DType type, npy::Dtype dtype) {
  switch (type) {
  case DType::F32: return dtype == npy::Dtype::F32;
  case DType::F16: return dtype == npy::Dtype::F16;
  case DType::BF16:
    return dtype == npy::Dtype::BF16 || dtype == npy::Dtype::U16 || dtype == npy::Dtype::I16;
  case DType::I8: return dtype == npy::Dtype::I8;
  case DType::I32:
  case DType::Bool: break; // the verifier admits no such buffer
  }
  return false;
}

std::string acceptedText(DType type) {
  std::string text = npy::describe(fileDtype(type));
  if (type == DType::BF16)
    text += fmt::format(", or its bits as {} or {}", npy::describe(npy::Dtype::U16),
                        npy::describe(npy::Dtype::I16));
  return text;
}

// The BufferRef for one input, checking the array's element type against
// the declared one and its rank against its kind.
BufferRef bindInput(const Param &param, const npy::Array &array, const std::string &file) {
  if (!accepts(param.type, array.dtype))
    usageError(fmt::format("input '{}' is {} but {} holds {}, which is not converted; {} inputs "
                           "take {}",
                           param.name, name(param.type), file, npy::describe(array.dtype),
                           name(param.type), acceptedText(param.type)));
  auto mismatch = [&](const char *needs) {
    usageError(fmt::format("input '{}' is a {} and needs {}; {} has shape {}", param.name,
                           name(param.kind), needs, file, shapeText(array.shape)));
  };
  switch (param.kind) {
  case ParamKind::RowTensor:
    if (array.shape.size() != 2)
      mismatch("a 2-D array");
    return BufferRef::matrix(array.raw(), array.shape[0], array.shape[1]);
  case ParamKind::ColVector:
    if (array.shape.size() != 1)
      mismatch("a 1-D array");
    return BufferRef::vector(array.raw(), array.shape[0]);
  case ParamKind::Scalar:
    if (array.size() != 1)
      mismatch("one element");
    return BufferRef::scalar(array.raw());
  }
  usageError("unknown parameter kind");
}

// Before any work: every output can be written, none is named twice, and
// none is an input (the .npy files or the program's text).
void checkOutputs(const std::string &program, const std::map<std::string, std::string> &in_files,
                  const std::map<std::string, std::string> &out_files) {
  std::vector<std::string> inputs, outputs;
  if (!program.starts_with("lib:"))
    inputs.push_back(program);
  for (const auto &[name, file] : in_files)
    inputs.push_back(file);
  for (const auto &[name, file] : out_files)
    outputs.push_back(file);
  io::checkOutputPaths(outputs, inputs);
}

} // namespace

void runCommand(const RunArgs &args) {
  Program program = loadProgram(args.program);
  std::map<std::string, std::string> in_files = parseBindings(args.inputs, "--in");
  std::map<std::string, std::string> out_files = parseBindings(args.outputs, "--out");
  for (const auto &[name, file] : in_files)
    if (program.inputIndex(name) < 0)
      usageError(fmt::format("--in {}: program '{}' has no input '{}' (inputs: {})", name,
                             program.name, name, declaredNames(program, true)));
  for (const auto &[name, file] : out_files)
    if (program.outputIndex(name) < 0)
      usageError(fmt::format("--out {}: program '{}' has no output '{}' (outputs: {})", name,
                             program.name, name, declaredNames(program, false)));

  // Arrays are kept alive here; the BufferRefs point into them.
  std::vector<npy::Array> arrays;
  arrays.reserve(program.inputs.size());
  std::vector<BufferRef> inputs;
  for (const Param &param : program.inputs) {
    auto it = in_files.find(param.name);
    if (it == in_files.end())
      usageError(fmt::format("missing --in {}=FILE.npy for input '{}'", param.name, param.name));
    arrays.push_back(npy::read(it->second, npy::Accept::Any));
    inputs.push_back(bindInput(param, arrays.back(), it->second));
  }
  for (const Output &output : program.outputs)
    if (!out_files.count(output.name))
      usageError(
          fmt::format("missing --out {}=FILE.npy for output '{}'", output.name, output.name));
  checkOutputs(args.program, in_files, out_files);

  Shape shape = bindShape(program, inputs, {});
  std::vector<npy::Array> results;
  std::vector<BufferRef> outputs;
  results.reserve(program.outputs.size());
  for (const Output &output : program.outputs) {
    int64_t cols = evaluateDim(output.cols, shape.cols, output.name);
    npy::Array array;
    array.shape = {shape.rows, cols};
    array.dtype = fileDtype(output.type);
    // NaN before the run, so that an element the kernel failed to write
    // shows; i8 has no NaN, and -128 is a value no write stores (roundToI8).
    auto count = static_cast<size_t>(shape.rows * cols);
    if (output.type == DType::BF16)
      array.bits.assign(count, kCanonicalNaNBF16);
    else if (output.type == DType::F16)
      array.bits.assign(count, kCanonicalNaNF16);
    else if (output.type == DType::I8)
      array.int8.assign(count, std::numeric_limits<int8_t>::min());
    else
      array.data.assign(count, std::numeric_limits<float>::quiet_NaN());
    results.push_back(std::move(array));
    outputs.push_back(BufferRef::matrix(results.back().raw(), shape.rows, cols));
  }

  Kernel kernel = compile(program, args.options);
  kernel.run(inputs, outputs);
  // Every output staged before any replaces its file: a failed write
  // (a full disk) leaves all of them as they were.
  io::StagedFiles files;
  for (size_t i = 0; i < results.size(); ++i)
    files.add(out_files.at(program.outputs[i].name), npy::serialize(results[i]));
  files.commit();
}

} // namespace lanejit::cli
