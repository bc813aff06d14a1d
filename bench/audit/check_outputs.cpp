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
int64_t elementBytes(const npy::Array &array) { return array.dtype == npy::Dtype::F32 ? 4 : 2; }

// The program type an .npy dtype holds in a bundle (the bench writes bf16
// as '<V2' and f16 as '<f2'), or nullopt.
std::optional<DType> heldType(npy::Dtype dtype) {
  switch (dtype) {
  case npy::Dtype::F32: return DType::F32;
  case npy::Dtype::F16: return DType::F16;
  case npy::Dtype::BF16: return DType::BF16;
  default: return std::nullopt;
  }
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
// 2^-8 (f16): eager rounds every intermediate (docs/bench.md).
Comparison compare(const npy::Array &output, DType type, bool peer, const ReferenceOutput &ref,
                   const std::string &name) {
  const double peerTolerance = type == DType::BF16 ? 0x1p-5 : type == DType::F16 ? 0x1p-8 : 0;
  Comparison result;
  for (int64_t r = 0; r < ref.rows; ++r)
    for (int64_t col = 0; col < ref.cols; ++col) {
      double got = readElement(output.raw(), type, r * ref.cols + col), want = ref.at(r, col);
      bool ok;
      if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
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

std::string payloadHash(const npy::Array &array) {
  return sha256Hex(std::string_view(static_cast<const char *>(array.raw()),
                                    static_cast<size_t>(array.size() * elementBytes(array))));
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
    Program program = parse(*text, c.program_file);
    if (program.outputs.size() != 1) {
      findings.fail(kind::kBadProgram, c.where,
                    "the program has " + std::to_string(program.outputs.size()) +
                        " outputs; a bundle records one output file per variant");
      return std::nullopt;
    }
    return program;
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

// Checks one variant's saved output; returns its payload hash when readable.
std::optional<std::string> checkVariant(const Case &c, const Variant &v, const ReferenceOutput *ref,
                                        const Output &out, const std::filesystem::path &dir,
                                        Findings &findings) {
  const std::string &out_name = out.name;
  std::string where = c.where + " variant '" + v.name + "'";
  std::optional<npy::Array> output = readArray(dir, v.output_file, where, findings);
  if (!output)
    return std::nullopt;
  std::string hash = payloadHash(*output);
  std::optional<std::string> first_hash;
  for (const Round &round : c.rounds)
    for (const Visit &visit : round.visits) {
      if (visit.variant != v.name || !visit.checks.output_sha256)
        continue;
      if (*visit.checks.output_sha256 != hash)
        findings.fail(kind::kAlteredOutput, visit.where,
                      "output_sha256 " + *visit.checks.output_sha256 + " but '" + v.output_file +
                          "' holds a payload hashing to " + hash);
      if (first_hash && *first_hash != *visit.checks.output_sha256)
        findings.fail(kind::kAlteredOutput, visit.where,
                      "output_sha256 differs from the variant's earlier rounds");
      first_hash = first_hash.value_or(*visit.checks.output_sha256);
    }
  if (!ref)
    return hash;
  std::vector<int64_t> want{ref->rows, ref->cols};
  if (output->shape != want) {
    findings.fail(kind::kWrongShape, where,
                  "output shape " + shapeText(output->shape) + ", expected " + shapeText(want));
    return hash;
  }
  if (heldType(output->dtype) != out.type) {
    findings.fail(kind::kWrongShape, where,
                  "the output file holds " + npy::describe(output->dtype) +
                      ", the program's output is " + std::string(name(out.type)));
    return hash;
  }
  Comparison result = compare(*output, out.type, v.kind == "peer", *ref, out_name);
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

// The roofline's bytes: every input read once and the output written once,
// from the saved arrays. Masked softmax may count only the scores it must
// read, so there the saved sizes are an upper bound.
void checkRooflineBytes(const Case &c, const std::vector<npy::Array> &inputs,
                        const ReferenceOutput &ref, DType outType, Findings &findings) {
  if (!c.roofline || !c.roofline->bytes)
    return;
  double bytes = static_cast<double>(ref.rows * ref.cols) * static_cast<double>(bytesOf(outType));
  for (const npy::Array &a : inputs)
    bytes += static_cast<double>(a.size()) * static_cast<double>(elementBytes(a));
  double recorded = *c.roofline->bytes;
  bool ok = c.op == "masked_softmax" ? recorded <= bytes : recorded == bytes;
  if (!ok)
    findings.fail(kind::kWrongRoofline, c.where + " summary roofline",
                  "bytes is " + num(recorded) + " but the inputs and output move " + num(bytes));
}

} // namespace

std::optional<Program> checkCaseData(const Case &c, const std::filesystem::path &dir,
                                     Findings &findings) {
  std::optional<ReferenceOutput> ref;
  Output out{"y", DType::F32, Dim::C()}; // until the program says otherwise
  std::optional<Program> program = readProgram(c, dir, findings);
  if (program) {
    // The case's element type is its first input's (a library case holds
    // every buffer in one type).
    std::string declared =
        program->inputs.empty() ? "f32" : std::string(name(program->inputs[0].type));
    if (c.dtype != declared)
      findings.fail(kind::kWrongShape, c.where,
                    "dtype is '" + c.dtype + "' but the program's buffers hold " + declared);
  }
  if (program && c.rows && c.cols) {
    out = program->outputs[0];
    try {
      if (auto inputs = readInputs(c, *program, dir, findings)) {
        std::vector<BufferRef> refs = buffersOf(*program, *inputs, *c.rows);
        ref = std::move(evaluateReference(*program, refs, Shape{*c.rows, *c.cols})[0]);
        checkRooflineBytes(c, *inputs, *ref, program->outputs[0].type, findings);
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
    if (auto hash = checkVariant(c, v, ref ? &*ref : nullptr, out, dir, findings))
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
