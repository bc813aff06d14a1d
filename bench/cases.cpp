// The case list and case specs from the command line (bench/cases.h).
#include "cases.h"

#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/shape_binding.h>
#include <lanejit/text.h>

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace lanejit::bench {
namespace {

int64_t parseCount(std::string_view text, const std::string &whole) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0)
    throw Error(Error::Kind::Bind,
                fmt::format("bad shape '{}': expected ROWSxCOLS with positive integers", whole));
  return value;
}

// The library operator `program` is, if any (same structure, hence the same
// input order the peers expect).
std::string libraryOpOf(const Program &program) {
  for (const auto *entries : {&library::all(), &library::quantizing()})
    for (const library::Entry &entry : *entries)
      if (entry.make().hash() == program.hash())
        return entry.name;
  return "";
}

bool quantizing(const std::string &op) {
  for (const library::Entry &entry : library::quantizing())
    if (entry.name == op)
      return true;
  return false;
}

std::string fileSafe(const std::string &name) {
  std::string result;
  for (char c : name)
    result += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return result.empty() ? "program" : result;
}

// id "<label>-<R>x<C>", or "<label>-<type>-<R>x<C>" for 16-bit buffers.
CaseSpec makeSpec(std::string op, Program program, Shape shape, const std::string &label,
                  const std::string &type = "f32") {
  std::string id = type == "f32"
                       ? fmt::format("{}-{}x{}", fileSafe(label), shape.rows, shape.cols)
                       : fmt::format("{}-{}-{}x{}", fileSafe(label), type, shape.rows, shape.cols);
  return {id, std::move(op), std::move(program), shape};
}

} // namespace

Shape parseShape(const std::string &text) {
  size_t x = text.find('x');
  if (x == std::string::npos)
    throw Error(Error::Kind::Bind,
                fmt::format("bad shape '{}': expected ROWSxCOLS, e.g. 17x66", text));
  std::string_view view(text);
  return {parseCount(view.substr(0, x), text), parseCount(view.substr(x + 1), text)};
}

std::vector<CaseSpec> seedCases() {
  std::vector<CaseSpec> cases;
  for (const library::Entry &entry : library::all()) {
    bool rope = entry.name == "rope";
    for (Shape shape : {Shape{17, rope ? 66 : 65}, Shape{1024, rope ? 4098 : 4097}})
      cases.push_back(makeSpec(entry.name, entry.make(), shape, entry.name));
  }
  return cases;
}

std::vector<CaseSpec> defaultCases() {
  std::vector<CaseSpec> cases = seedCases();
  for (const library::Entry &entry : library::all())
    cases.push_back(libraryCase(entry.name + (entry.name == "rope" ? ":1024x4098" : ":1024x4097") +
                                ":bf16"));
  // Q8_0 at the large shape only: its case costs ~25 s of the main job at
  // one thread; the decode and bf16 Q8_0 rows are in --cases int8.
  for (const char *spec : {"rmsnorm_q8:1024x4097", "rmsnorm_q8:1x4096", "rmsnorm_q8_0:1024x4096"})
    cases.push_back(libraryCase(spec));
  return cases;
}

std::vector<CaseSpec> decodeCases() {
  std::vector<CaseSpec> cases;
  for (const char *spec : {"rmsnorm:1x1048576", "rmsnorm:1x4096", "layernorm:4x262144",
                           "swiglu:8x65536", "gelu_residual:8x65536", "rope:32x128"})
    cases.push_back(libraryCase(spec));
  return cases;
}

std::vector<CaseSpec> halfCases() {
  std::vector<CaseSpec> cases;
  for (const library::Entry &entry : library::all()) {
    std::string shape = entry.name == "rope" ? "1024x4098" : "1024x4097";
    for (const char *type : {"f32", "bf16", "f16"})
      cases.push_back(libraryCase(entry.name + ":" + shape + ":" + type));
  }
  for (const CaseSpec &decode : decodeCases())
    cases.push_back(libraryCase(decode.op + ":" + std::to_string(decode.shape.rows) + "x" +
                                std::to_string(decode.shape.cols) + ":bf16"));
  return cases;
}

std::vector<CaseSpec> int8Cases() {
  std::vector<CaseSpec> cases;
  for (const char *spec :
       {"rmsnorm_q8:1024x4097", "rmsnorm_q8:1024x4097:bf16", "rmsnorm_q8:1x4096",
        "rmsnorm_q8:1x4096:bf16", "rmsnorm_q8_0:1024x4096", "rmsnorm_q8_0:1024x4096:bf16",
        "rmsnorm_q8_0:1x4096", "rmsnorm_q8_0:1x4096:bf16"})
    cases.push_back(libraryCase(spec));
  return cases;
}

std::vector<CaseSpec> narrowCases() {
  std::vector<CaseSpec> cases;
  for (const char *spec :
       {"masked_softmax:4096x8", "rmsnorm:65536x8", "layernorm:65536x8", "swiglu:65536x8",
        "gelu_residual:65536x8", "rmsnorm:4096x64", "masked_softmax:4096x64", "rmsnorm:1x8"})
    cases.push_back(libraryCase(spec));
  return cases;
}

void validateCase(const CaseSpec &spec) {
  try {
    for (const Param &param : spec.program.inputs)
      if (param.kind != ParamKind::Scalar)
        evaluateDim(param.cols, spec.shape.cols, param.name);
    for (const Output &output : spec.program.outputs)
      evaluateDim(output.cols, spec.shape.cols, output.name);
  } catch (const Error &e) {
    throw Error(e.kind(), fmt::format("case {}: {}", spec.id, e.what()));
  }
}

CaseSpec libraryCase(const std::string &spec) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos)
    throw Error(Error::Kind::Bind,
                fmt::format("bad case '{}': expected OP:ROWSxCOLS[:TYPE], e.g. rope:17x66", spec));
  std::string op = spec.substr(0, colon);
  Program program = library::byName(op); // names the known operators on error
  std::string shape = spec.substr(colon + 1), type = "f32";
  if (size_t second = shape.find(':'); second != std::string::npos) {
    type = shape.substr(second + 1);
    shape.resize(second);
  }
  if (type == "f32")
    return makeSpec(op, std::move(program), parseShape(shape), op);
  if (type != "bf16" && type != "f16")
    throw Error(Error::Kind::Bind,
                fmt::format("bad case '{}': the type is f32, bf16 or f16, not '{}'", spec, type));
  DType storage = type == "bf16" ? DType::BF16 : DType::F16;
  Program stored = withStorage(program, storage);
  // A quantizing operator's outputs are its own types (i8 values, f32 or
  // f16 scales), whatever its inputs hold.
  if (quantizing(op))
    stored.outputs = program.outputs;
  return makeSpec(op, std::move(stored), parseShape(shape), op, type);
}

std::string caseType(const CaseSpec &spec) {
  return spec.program.inputs.empty() ? "f32" : std::string(name(spec.program.inputs[0].type));
}

CaseSpec programCase(const std::string &path, const std::string &shape) {
  Program program = parseFile(path);
  std::string op = libraryOpOf(program);
  std::string label = program.name.empty() ? "program" : program.name;
  return makeSpec(std::move(op), std::move(program), parseShape(shape), label);
}

} // namespace lanejit::bench
