// A case's data: the saved program, inputs and outputs. The program is
// parsed with the library's text parser and evaluated by its FP64 reference
// (the thing the bench claims its outputs match); the comparison, the
// shapes and the payload hashes are the audit's own.
#include "checks.h"

#include "npy.h"

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
    return npy::parse(*bytes, file);
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

// |y - ref| <= atol + rtol*|ref|; NaN matches only NaN, infinities only
// themselves.
Comparison compare(const npy::Array &output, const ReferenceOutput &ref, const std::string &name) {
  Comparison result;
  for (int64_t r = 0; r < ref.rows; ++r)
    for (int64_t col = 0; col < ref.cols; ++col) {
      double got = output.data[r * ref.cols + col], want = ref.at(r, col);
      bool ok;
      if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got)) {
        ok = (std::isnan(want) && std::isnan(got)) || got == want;
      } else {
        double error = std::fabs(got - want);
        result.max_abs_error = std::max(result.max_abs_error, error);
        ok = error <= kOracleTolerance + kOracleTolerance * std::fabs(want);
      }
      if (!ok && result.failures++ == 0)
        result.first = name + "[" + std::to_string(r) + "," + std::to_string(col) + "]: got " +
                       num(got) + ", want " + num(want);
    }
  return result;
}

std::string payloadHash(const npy::Array &array) {
  std::string bytes(array.data.size() * sizeof(float), '\0');
  if (!bytes.empty())
    std::memcpy(bytes.data(), array.data.data(), bytes.size());
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
    const float *data = arrays[i].data.data();
    const npy::Array &a = arrays[i];
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
                                        const std::string &out_name,
                                        const std::filesystem::path &dir, Findings &findings) {
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
  Comparison result = compare(*output, *ref, out_name);
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
                        const ReferenceOutput &ref, Findings &findings) {
  if (!c.roofline || !c.roofline->bytes)
    return;
  double bytes = static_cast<double>(ref.rows * ref.cols) * sizeof(float);
  for (const npy::Array &a : inputs)
    bytes += static_cast<double>(a.data.size()) * sizeof(float);
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
  std::string out_name = "y";
  std::optional<Program> program = readProgram(c, dir, findings);
  if (program && c.rows && c.cols) {
    out_name = program->outputs[0].name;
    try {
      if (auto inputs = readInputs(c, *program, dir, findings)) {
        std::vector<BufferRef> refs = buffersOf(*program, *inputs, *c.rows);
        ref = std::move(evaluateReference(*program, refs, Shape{*c.rows, *c.cols})[0]);
        checkRooflineBytes(c, *inputs, *ref, findings);
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
    if (auto hash = checkVariant(c, v, ref ? &*ref : nullptr, out_name, dir, findings))
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
