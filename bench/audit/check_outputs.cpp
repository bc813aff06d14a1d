// A case's data: the saved program, inputs and outputs. The program is
// parsed with the library's text parser and evaluated by its FP64 reference
// (the thing the bench claims its outputs match); the comparison, the
// shapes and the payload hashes are the audit's own.
#include "checks.h"

#include "npy.h"

#include <lanejit/element_types.h>
#include <lanejit/reference.h>
#include <lanejit/shape_binding.h>
#include <lanejit/text.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

namespace lanejit::audit {
namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string num(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

// An .npy file of the bundle, or nullopt after reporting why not.
std::optional<npy::Array> readArray(const std::filesystem::path &dir, const std::string &file,
                                    const std::string &where, Findings &findings) {
  if (file.empty() || !isBundlePath(file))
    return std::nullopt; // reported by the field and path checks
  std::optional<std::string> bytes = readFileBytes(dir / file);
  if (!bytes) {
    findings.fail(kind::kMissingFile, where, "'" + file + "' cannot be read");
    return std::nullopt;
  }
  try {
    return npy::parse(*bytes, file, npy::Accept::Any);
  } catch (const std::exception &e) {
    findings.fail(kind::kMalformed, where, e.what());
    return std::nullopt;
  }
}

struct Comparison {
  int64_t failures = 0;
  double max_abs_error = 0;
  std::string first; // "y[1,7]: got 0.5, want 0.25"
};

// Bytes per element of an array as the bundle stores it.
int64_t elementBytes(const npy::Array &array) {
  return array.dtype == npy::Dtype::F32 ? 4 : array.dtype == npy::Dtype::I8 ? 1 : 2;
}

// The program type an .npy dtype holds in a bundle (the bench writes bf16
// as '<V2', f16 as '<f2' and i8 as '|i1'), or nullopt.
std::optional<DType> heldType(npy::Dtype dtype) {
  switch (dtype) {
  case npy::Dtype::F32: return DType::F32;
  case npy::Dtype::F16: return DType::F16;
  case npy::Dtype::BF16: return DType::BF16;
  case npy::Dtype::I8: return DType::I8;
  default: return std::nullopt;
  }
}

// The i8 value the oracle's value stores as, by the audit's own reading of
// the rule (docs/element-types.md): the f32 it rounds from, to nearest with
// ties to even, saturated to +-127; NaN stores 0.
double storedI8(double want) {
  auto value = static_cast<float>(want);
  if (std::isnan(value))
    return 0;
  return std::nearbyint(std::clamp(value, -127.0f, 127.0f)); // the default mode: ties to even
}

// One unit in the last place of a bf16 (8 significant bits, exponents from
// -126) or f16 (11 bits, from -14) value of magnitude |x|; 0 for f32.
double lastPlace(DType type, double x) {
  if (type != DType::BF16 && type != DType::F16)
    return 0;
  int bits = type == DType::BF16 ? 8 : 11, low = type == DType::BF16 ? -126 : -14;
  int exponent = x == 0 ? low : std::max(std::ilogb(x), low);
  return std::ldexp(1.0, exponent - bits + 1);
}

// |y - ref| <= atol + rtol*|ref| (+ one unit in the last place of a bf16 or
// f16 output); NaN matches only NaN, infinities only themselves. A peer's
// bf16 or f16 output may instead be within atol = rtol = 2^-5 (bf16) or
// 2^-8 (f16): eager rounds every intermediate (docs/bench.md), except in a
// quantizing program (`peer` false: its f16 scales are rounded once by
// every peer). An i8 output is one step from the oracle's value as stored.
Comparison compare(const npy::Array &output, DType type, bool peer, const ReferenceOutput &ref,
                   const std::string &name) {
  const double peerTolerance = type == DType::BF16 ? 0x1p-5 : type == DType::F16 ? 0x1p-8 : 0;
  Comparison result;
  for (int64_t r = 0; r < ref.rows; ++r)
    for (int64_t col = 0; col < ref.cols; ++col) {
      double got = readElement(output.raw(), type, r * ref.cols + col), want = ref.at(r, col);
      bool ok;
      if (type == DType::I8) {
        // One step either side of the oracle's value as stored, for every
        // variant: f32 and f64 round a value near a half apart.
        ok = std::fabs(got - storedI8(want)) <= 1;
        if (std::isfinite(want))
          result.max_abs_error = std::max(result.max_abs_error, std::fabs(got - want));
      } else if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
        // A finite value beyond a 16-bit type's range is stored as infinity.
        bool overflow = lastPlace(type, want) > 0 && std::isinf(got) && std::isfinite(want) &&
                        std::fabs(want) >= (type == DType::BF16 ? 0x1.fep127 : 65520.0) &&
                        std::signbit(got) == std::signbit(want);
        ok = (std::isnan(want) && std::isnan(got)) || got == want || overflow;
      } else {
        double error = std::fabs(got - want);
        result.max_abs_error = std::max(result.max_abs_error, error);
        ok = error <= kOracleTolerance + kOracleTolerance * std::fabs(want) +
                          lastPlace(type, std::fabs(want)) ||
             (peer && error <= peerTolerance + peerTolerance * std::fabs(want));
      }
      if (!ok && result.failures++ == 0)
        result.first = name + "[" + std::to_string(r) + "," + std::to_string(col) + "]: got " +
                       num(got) + ", want " + num(want);
    }
  return result;
}

// Of every output's payload, concatenated in the program's order (one
// output: its payload's hash), as the bench records output_sha256.
std::string payloadHash(const std::vector<npy::Array> &arrays) {
  std::string bytes;
  for (const npy::Array &array : arrays)
    bytes.append(static_cast<const char *>(array.raw()),
                 static_cast<size_t>(array.size() * elementBytes(array)));
  return sha256Hex(bytes);
}

std::optional<Program> readProgram(const Case &c, const std::filesystem::path &dir,
                                   Findings &findings) {
  if (c.program_file.empty() || !isBundlePath(c.program_file))
    return std::nullopt;
  std::optional<std::string> text = readFileBytes(dir / c.program_file);
  if (!text) {
    findings.fail(kind::kMissingFile, c.where, "'" + c.program_file + "' cannot be read");
    return std::nullopt;
  }
  try {
    return parse(*text, c.program_file);
  } catch (const std::exception &e) {
    findings.fail(kind::kBadProgram, c.where, e.what());
    return std::nullopt;
  }
}

// The inputs as the program declares them, or nullopt after reporting.
std::optional<std::vector<npy::Array>> readInputs(const Case &c, const Program &program,
                                                  const std::filesystem::path &dir,
                                                  Findings &findings) {
  std::string declared, recorded;
  for (const Param &p : program.inputs)
    declared += (declared.empty() ? "" : ", ") + p.name;
  for (const InputFile &in : c.inputs)
    recorded += (recorded.empty() ? "" : ", ") + in.name;
  if (declared != recorded) {
    findings.fail(kind::kWrongShape, c.where,
                  "inputs [" + recorded + "] are not the program's inputs [" + declared + "]");
    return std::nullopt;
  }
  std::vector<npy::Array> arrays;
  bool ok = true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Param &decl = program.inputs[i];
    std::string where = c.where + " input '" + decl.name + "'";
    std::optional<npy::Array> array = readArray(dir, c.inputs[i].file, where, findings);
    if (!array) {
      ok = false;
      continue;
    }
    if (heldType(array->dtype) != decl.type) {
      findings.fail(kind::kWrongShape, where,
                    "the file holds " + npy::describe(array->dtype) + ", the program declares " +
                        std::string(name(decl.type)));
      ok = false;
    }
    std::vector<int64_t> want;
    if (decl.kind != ParamKind::Scalar) {
      int64_t cols = evaluateDim(decl.cols, *c.cols, decl.name);
      want = decl.kind == ParamKind::RowTensor ? std::vector<int64_t>{*c.rows, cols}
                                               : std::vector<int64_t>{cols};
    }
    bool scalar_ok =
        decl.kind == ParamKind::Scalar && array->size() == 1 && array->shape.size() <= 1;
    if (array->shape != want && !scalar_ok) {
      findings.fail(kind::kWrongShape, where,
                    "shape " + shapeText(array->shape) + ", the program at " +
                        std::to_string(*c.rows) + "x" + std::to_string(*c.cols) + " needs " +
                        shapeText(want));
      ok = false;
    }
    arrays.push_back(std::move(*array));
  }
  if (!ok)
    return std::nullopt;
  return arrays;
}

std::vector<BufferRef> buffersOf(const Program &program, const std::vector<npy::Array> &arrays,
                                 int64_t rows) {
  std::vector<BufferRef> refs;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const npy::Array &a = arrays[i];
    const void *data = a.raw();
    switch (program.inputs[i].kind) {
    case ParamKind::RowTensor: refs.push_back(BufferRef::matrix(data, rows, a.shape[1])); break;
    case ParamKind::ColVector: refs.push_back(BufferRef::vector(data, a.shape[0])); break;
    case ParamKind::Scalar: refs.push_back(BufferRef::scalar(data)); break;
    }
  }
  return refs;
}

// The files of a variant's outputs in the program's order: output_files
// when written, else output_file as the one output; nullopt after reporting
// a list that is not the program's outputs.
std::optional<std::vector<std::string>> outputFiles(const Case &c, const Variant &v,
                                                    const std::vector<Output> &outputs,
                                                    Findings &findings) {
  std::string where = c.where + " variant '" + v.name + "'";
  if (v.output_files.empty()) {
    if (outputs.size() <= 1) // one output, or no program to say
      return std::vector<std::string>{v.output_file};
    findings.fail(kind::kWrongShape, where,
                  "one output_file, but the program has " + std::to_string(outputs.size()) +
                      " outputs (output_files is missing)");
    return std::nullopt;
  }
  std::string declared, recorded;
  for (const Output &out : outputs)
    declared += (declared.empty() ? "" : ", ") + out.name;
  for (const InputFile &f : v.output_files)
    recorded += (recorded.empty() ? "" : ", ") + f.name;
  if (!outputs.empty() && declared != recorded) {
    findings.fail(kind::kWrongShape, where,
                  "output_files [" + recorded + "] are not the program's outputs [" + declared +
                      "]");
    return std::nullopt;
  }
  if (v.output_file != v.output_files[0].file)
    findings.fail(kind::kMalformed, where,
                  "output_file '" + v.output_file + "' is not the first of output_files ('" +
                      v.output_files[0].file + "')");
  std::vector<std::string> files;
  for (const InputFile &f : v.output_files)
    files.push_back(f.file);
  return files;
}

// Checks one variant's saved outputs (`refs`: the oracle's, one per output,
// or empty when it could not run); returns their payload hash when
// readable.
std::optional<std::string> checkVariant(const Case &c, const Variant &v,
                                        const std::vector<ReferenceOutput> &refs,
                                        const std::vector<Output> &outputs,
                                        const std::filesystem::path &dir, Findings &findings) {
  std::string where = c.where + " variant '" + v.name + "'";
  std::optional<std::vector<std::string>> files = outputFiles(c, v, outputs, findings);
  if (!files)
    return std::nullopt;
  std::vector<npy::Array> arrays;
  for (size_t o = 0; o < files->size(); ++o) {
    std::string output_where =
        files->size() > 1 ? where + " output '" + v.output_files[o].name + "'" : where;
    std::optional<npy::Array> array = readArray(dir, (*files)[o], output_where, findings);
    if (!array)
      return std::nullopt;
    arrays.push_back(std::move(*array));
  }
  std::string hash = payloadHash(arrays);
  std::optional<std::string> first_hash;
  std::string named = files->size() > 1 ? "the saved outputs hold" : "'" + (*files)[0] + "' holds";
  for (const Round &round : c.rounds)
    for (const Visit &visit : round.visits) {
      if (visit.variant != v.name || !visit.checks.output_sha256)
        continue;
      if (*visit.checks.output_sha256 != hash)
        findings.fail(kind::kAlteredOutput, visit.where,
                      "output_sha256 " + *visit.checks.output_sha256 + " but " + named +
                          " a payload hashing to " + hash);
      if (first_hash && *first_hash != *visit.checks.output_sha256)
        findings.fail(kind::kAlteredOutput, visit.where,
                      "output_sha256 differs from the variant's earlier rounds");
      first_hash = first_hash.value_or(*visit.checks.output_sha256);
    }
  if (refs.size() != arrays.size() || outputs.size() != arrays.size())
    return hash; // no oracle to compare with
  bool quantizing = false; // an i8 output: the peers' allowance for 16-bit ones is off
  for (const Output &out : outputs)
    quantizing = quantizing || out.type == DType::I8;
  Comparison result;
  for (size_t o = 0; o < arrays.size(); ++o) {
    const ReferenceOutput &ref = refs[o];
    const npy::Array &output = arrays[o];
    const Output &out = outputs[o];
    std::string output_where = arrays.size() > 1 ? where + " output '" + out.name + "'" : where;
    std::vector<int64_t> want{ref.rows, ref.cols};
    if (output.shape != want) {
      findings.fail(kind::kWrongShape, output_where,
                    "output shape " + shapeText(output.shape) + ", expected " + shapeText(want));
      return hash;
    }
    if (heldType(output.dtype) != out.type) {
      findings.fail(kind::kWrongShape, output_where,
                    "the output file holds " + npy::describe(output.dtype) +
                        ", the program's output is " + std::string(name(out.type)));
      return hash;
    }
    Comparison one = compare(output, out.type, v.kind == "peer" && !quantizing, ref, out.name);
    if (one.failures && !result.failures)
      result.first = one.first;
    result.failures += one.failures;
    result.max_abs_error = std::max(result.max_abs_error, one.max_abs_error);
  }
  if (result.failures)
    findings.fail(kind::kFailedCheck, where,
                  "the saved output fails the FP64 oracle at " + std::to_string(result.failures) +
                      " elements; first " + result.first);
  for (const Round &round : c.rounds)
    for (const Visit &visit : round.visits) {
      if (visit.variant != v.name)
        continue;
      const VisitChecks &checks = visit.checks;
      if (checks.oracle_failures && *checks.oracle_failures != result.failures)
        findings.fail(kind::kWrongOracle, visit.where,
                      "oracle_failures is " + std::to_string(*checks.oracle_failures) +
                          " but the saved output has " + std::to_string(result.failures));
      if (checks.oracle_max_abs_error &&
          !relativelyClose(*checks.oracle_max_abs_error, result.max_abs_error, 1e-6))
        findings.fail(kind::kWrongOracle, visit.where,
                      "oracle_max_abs_error is " + num(*checks.oracle_max_abs_error) +
                          " but the saved output's is " + num(result.max_abs_error));
    }
  return hash;
}

// The roofline's bytes: every input read once and every output written
// once, from the saved inputs and the oracle's outputs in their declared
// types. Masked softmax may count only the scores it must read, so there
// the saved sizes are an upper bound.
void checkRooflineBytes(const Case &c, const std::vector<npy::Array> &inputs,
                        const std::vector<ReferenceOutput> &refs,
                        const std::vector<Output> &outputs, Findings &findings) {
  double bytes = 0;
  for (size_t o = 0; o < refs.size() && o < outputs.size(); ++o)
    bytes += static_cast<double>(refs[o].rows * refs[o].cols) *
             static_cast<double>(bytesOf(outputs[o].type));
  for (const npy::Array &a : inputs)
    bytes += static_cast<double>(a.size()) * static_cast<double>(elementBytes(a));
  auto check = [&](double recorded, std::string_view failure, const std::string &where) {
    bool ok = c.op == "masked_softmax" ? recorded <= bytes : recorded == bytes;
    if (!ok)
      findings.fail(failure, where,
                    "bytes is " + num(recorded) + " but the inputs and outputs move " + num(bytes));
  };
  if (c.roofline && c.roofline->bytes)
    check(*c.roofline->bytes, kind::kWrongRoofline, c.where + " summary roofline");
  // The floor's memory part counts the same bytes (check_floor.cpp checks the rest).
  const nlohmann::json *memory = c.floor.is_object() && c.floor.contains("memory")
                                     ? &c.floor["memory"] : nullptr;
  if (memory && memory->is_object() && memory->value("bytes", nlohmann::json()).is_number())
    check((*memory)["bytes"].get<double>(), kind::kWrongFloor, c.where + " summary floor memory");
}

} // namespace

std::optional<Program> checkCaseData(const Case &c, const std::filesystem::path &dir,
                                     Findings &findings) {
  std::vector<ReferenceOutput> refs;
  std::vector<Output> outputs; // the program's, when it parses
  std::optional<Program> program = readProgram(c, dir, findings);
  if (program) {
    // The case's element type is its first input's (a library case holds
    // every input in one type).
    std::string declared =
        program->inputs.empty() ? "f32" : std::string(name(program->inputs[0].type));
    if (c.dtype != declared)
      findings.fail(kind::kWrongShape, c.where,
                    "dtype is '" + c.dtype + "' but the program's buffers hold " + declared);
    outputs = program->outputs;
  }
  if (program && c.rows && c.cols) {
    try {
      if (auto inputs = readInputs(c, *program, dir, findings)) {
        std::vector<BufferRef> buffers = buffersOf(*program, *inputs, *c.rows);
        refs = evaluateReference(*program, buffers, Shape{*c.rows, *c.cols});
        checkRooflineBytes(c, *inputs, refs, program->outputs, findings);
      }
    } catch (const std::exception &e) {
      findings.fail(kind::kWrongShape, c.where, std::string("the oracle cannot run: ") + e.what());
    }
  }
  // No compiler switch may change an output bit: a lanejit visit's
  // bits_match_default claims its variant's output equals the first
  // (default) variant's.
  std::map<std::string, std::string> hashes;
  for (const Variant &v : c.variants)
    if (auto hash = checkVariant(c, v, refs, outputs, dir, findings))
      hashes[v.name] = *hash;
  if (c.variants.empty() || !hashes.count(c.variants[0].name))
    return program;
  const std::string &first = c.variants[0].name;
  for (const Variant &v : c.variants) {
    if (v.kind != "lanejit" || !hashes.count(v.name))
      continue;
    bool same = hashes[v.name] == hashes[first];
    for (const Round &round : c.rounds)
      for (const Visit &visit : round.visits) {
        if (visit.variant != v.name || !visit.checks.bits_match_default)
          continue;
        if (*visit.checks.bits_match_default != same)
          findings.fail(kind::kAlteredOutput, visit.where,
                        std::string("bits_match_default is ") + (same ? "false" : "true") +
                            " but the saved outputs of '" + v.name + "' and '" + first + "' are " +
                            (same ? "identical" : "different"));
      }
  }
  return program;
}

} // namespace lanejit::audit
