// Running one case (bench/case_runner.h).
#include "case_runner.h"

#include "floor.h"
#include "io/staged_files.h"
#include "machine_code.h"
#include "npy.h"
#include "oracle.h"
#include "orders.h"
#include "sha256.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace lanejit::bench {
namespace fs = std::filesystem;
namespace {

// A buffer as an .npy array of its own type: bf16 as np.save writes
// ml_dtypes.bfloat16, f16 as float16, i8 as int8, bits as stored.
npy::Array toArray(const check::GuardedBuffer &buffer, bool vector, bool scalar) {
  npy::Array array;
  if (!scalar)
    array.shape = vector ? std::vector<int64_t>{buffer.cols()}
                         : std::vector<int64_t>{buffer.rows(), buffer.cols()};
  if (buffer.type() == DType::F32) {
    array.data.assign(buffer.data(), buffer.data() + buffer.elements());
    return array;
  }
  if (buffer.type() == DType::I8) {
    array.dtype = npy::Dtype::I8;
    const auto *values = static_cast<const int8_t *>(buffer.raw());
    array.int8.assign(values, values + buffer.elements());
    return array;
  }
  array.dtype = buffer.type() == DType::BF16 ? npy::Dtype::BF16 : npy::Dtype::F16;
  const auto *bits = static_cast<const uint16_t *>(buffer.raw());
  array.bits.assign(bits, bits + buffer.elements());
  return array;
}

// The inputs' bytes as the case filled them: each visit compares them
// (memcmp, faster than hashing tens of megabytes per visit).
std::vector<std::string> inputBytes(const check::Case &c) {
  std::vector<std::string> bytes;
  for (const check::GuardedBuffer &b : c.inputs)
    bytes.emplace_back(static_cast<const char *>(b.raw()), static_cast<size_t>(b.bytes()));
  return bytes;
}

bool inputsUnchanged(const check::Case &c, const std::vector<std::string> &original) {
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (std::memcmp(c.inputs[i].raw(), original[i].data(), original[i].size()) != 0)
      return false;
  return true;
}

// The oracle's verdict on output bytes already compared, by their SHA-256
// and whether a peer's tolerance applied: the same bytes get the same
// verdict, so a large case compares each distinct output once, not every
// visit (lanejit's variants all give the same bits).
using OracleMemo = std::map<std::pair<std::string, bool>, OracleCheck>;

bool guardsIntact(const check::Case &c) {
  for (const auto *list : {&c.inputs, &c.outputs})
    for (const check::GuardedBuffer &b : *list)
      if (!b.guardsIntact())
        return false;
  return true;
}

// Of every output's payload, concatenated in the program's order (one
// output: its payload's hash).
std::string outputSha256(const check::Case &c) {
  if (c.outputs.size() == 1)
    return bench::sha256Hex(c.outputs[0].raw(), static_cast<size_t>(c.outputs[0].bytes()));
  std::string bytes;
  for (const check::GuardedBuffer &out : c.outputs)
    bytes.append(static_cast<const char *>(out.raw()), static_cast<size_t>(out.bytes()));
  return bench::sha256Hex(bytes.data(), bytes.size());
}

// Before a visit: NaN in every float output; -128 in an i8 one, a value no
// write stores (roundToI8 saturates at +-127), since i8 has no NaN.
void prefill(check::Case &c) {
  for (check::GuardedBuffer &out : c.outputs) {
    if (out.type() == DType::I8)
      std::memset(out.raw(), 0x80, static_cast<size_t>(out.bytes()));
    else
      out.fill(std::numeric_limits<float>::quiet_NaN());
  }
}

// "atol = rtol = 5e-5", and the allowances of the outputs' types.
std::string toleranceText(const check::Case &c) {
  bool half = false, i8 = false;
  for (const check::GuardedBuffer &out : c.outputs) {
    half = half || out.type() == DType::BF16 || out.type() == DType::F16;
    i8 = i8 || out.type() == DType::I8;
  }
  return fmt::format("atol = rtol = {}{}{}", check::kTolerance,
                     half ? " and a last-place unit" : "", i8 ? "; i8: one step" : "");
}

// Writes programs/<id>.lj and inputs/<id>/<name>.npy; fills their records.
void writeCaseFiles(CaseRecord &record, const CaseSpec &spec, const check::Case &c,
                    const fs::path &dir) {
  record.program_file = "programs/" + spec.id + ".lj";
  fs::create_directories(dir / "programs");
  io::writeFileAtomically((dir / record.program_file).string(), print(spec.program));
  fs::create_directories(dir / "inputs" / spec.id);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Param &param = spec.program.inputs[i];
    std::string file = "inputs/" + spec.id + "/" + param.name + ".npy";
    npy::write((dir / file).string(), toArray(c.inputs[i], param.kind == ParamKind::ColVector,
                                              param.kind == ParamKind::Scalar));
    record.inputs.push_back({param.name, file});
  }
  fs::create_directories(dir / "outputs" / spec.id);
}

// The checks after a visit; the visit's status names every failed one.
// Guard zones cannot be restored under bound pointers, so damage stays; a
// visit that finds them already damaged says so (`guards_before`).
void checkVisit(VisitRecord &visit, const check::Case &c, const Oracle &oracle,
                OracleMemo &memo, const std::vector<std::string> &inputs,
                const BoundVariant &variant, std::map<std::string, std::string> &first_sha,
                bool guards_before) {
  VisitChecks &k = visit.checks;
  k.output_sha256 = outputSha256(c);
  bool peer = variant.record.kind == "peer";
  auto known = memo.find({k.output_sha256, peer});
  if (known == memo.end())
    known = memo.emplace(std::pair{k.output_sha256, peer}, oracle.compare(c, peer)).first;
  const OracleCheck &o = known->second;
  k.oracle_failures = o.failures;
  k.oracle_max_abs_error = o.max_abs_error;
  k.first_failure = o.first_failure;
  k.inputs_unchanged = inputsUnchanged(c, inputs);
  k.guards_intact = guardsIntact(c) && variant.callable->guardsIntact();
  auto [it, first] = first_sha.emplace(variant.record.name, k.output_sha256);
  k.output_stable = first || it->second == k.output_sha256;
  if (variant.kernel)
    k.report_matches_claims = allHold(checkClaims(variant.claims, variant.kernel->report()));

  std::vector<std::string> reasons;
  if (o.failures)
    reasons.push_back(fmt::format("{} elements outside the oracle's tolerance ({}), first {}",
                                  o.failures, toleranceText(c), o.first_failure));
  if (!k.inputs_unchanged)
    reasons.push_back("an input changed");
  if (!k.guards_intact)
    reasons.push_back(guards_before ? "a guard zone was overwritten"
                                    : "a guard zone was overwritten before this visit");
  if (!k.output_stable)
    reasons.push_back("output bits differ from this variant's first visit");
  if (k.report_matches_claims == false)
    reasons.push_back("compile report contradicts the variant's claims");
  if (!reasons.empty())
    visit.status = "failed: " + fmt::format("{}", fmt::join(reasons, "; "));
}

void writeOutputs(const VariantRecord &variant, const check::Case &c, const fs::path &dir) {
  if (variant.output_files.empty()) {
    npy::write((dir / variant.output_file).string(), toArray(c.outputs.at(0), false, false));
    return;
  }
  fs::create_directories((dir / variant.output_files[0].file).parent_path());
  for (size_t o = 0; o < c.outputs.size(); ++o)
    npy::write((dir / variant.output_files[o].file).string(), toArray(c.outputs[o], false, false));
}

// After the rounds: every lanejit visit's output bits against the default
// (first) lanejit variant's, since no switch may change an output bit.
void checkBitIdentity(CaseRecord &record, const std::map<std::string, std::string> &first_sha) {
  const VariantRecord &reference = record.variants.front();
  if (reference.kind != "lanejit" || !first_sha.count(reference.name))
    return;
  const std::string &expected = first_sha.at(reference.name);
  for (RoundRecord &round : record.rounds) {
    for (VisitRecord &visit : round.visits) {
      auto v = std::find_if(record.variants.begin(), record.variants.end(),
                            [&](const VariantRecord &r) { return r.name == visit.variant; });
      if (v->kind != "lanejit")
        continue;
      visit.checks.bits_match_default = visit.checks.output_sha256 == expected;
      if (*visit.checks.bits_match_default)
        continue;
      std::string reason = "output bits differ from " + reference.name + "'s";
      visit.status = visit.ok() ? "failed: " + reason : visit.status + "; " + reason;
    }
  }
}

StreamRecord streamRecord(const StreamSamples &s) {
  return StreamRecord{s.bytes_per_pass, s.passes, s.seconds};
}

// The roofline (large library cases only) and the floor (every case),
// against the first (default lanejit) variant; one bandwidth measurement
// at the case's footprint serves both.
void addFloorAndRoofline(CaseRecord &record, const CaseContext &context,
                         const BoundVariant &first, check::Case &c) {
  if (record.variants.front().kind != "lanejit" || !first.kernel || record.time_s.empty() ||
      record.time_s.front().first != record.variants.front().name)
    return;
  const double time_s = record.time_s.front().second;
  const auto start = std::chrono::steady_clock::now();
  FloorRecord floor;
  // The element size of the case's type; rmsnorm_q8's outputs are i8 and
  // f32 whatever it is (rmsnorm_q8_0's i8 and f16), and bytesMoved counts
  // them so.
  int64_t bytes = record.op.empty() ? 0
                                    : bytesMoved(record.op, record.rows, record.cols,
                                                 record.dtype == "f32" ? 4 : 2);
  Bandwidth bw;
  // A small footprint's rate settles in far fewer passes: a quarter of the
  // budget keeps the floor of the small cases cheap.
  bool large = record.rows * record.cols >= (int64_t{1} << 20);
  if (bytes > 0)
    bw = measureBandwidth(bytes, context.bandwidth_budget_s * (large ? 1 : 0.25));
  if (record.op.empty())
    floor.memory_unavailable = "not a library operator: no byte count";
  else if (!(bw.copy_bytes_per_s > 0))
    floor.memory_unavailable = "no bandwidth measured";
  if (floor.memory_unavailable.empty()) {
    floor.bytes = bytes;
    floor.copy_bytes_per_s = bw.copy_bytes_per_s;
    floor.triad_bytes_per_s = bw.triad_bytes_per_s;
    floor.copy = streamRecord(bw.copy);
    floor.triad = streamRecord(bw.triad);
    // The bytes at the faster of the two measured streams.
    floor.memory_s =
        static_cast<double>(bytes) / std::max(bw.copy_bytes_per_s, bw.triad_bytes_per_s);
    if (large)
      record.roofline = RooflineRecord{bytes,           bw.copy_bytes_per_s, bw.triad_bytes_per_s,
                                       floor.memory_s,  time_s / floor.memory_s,
                                       floor.copy,      floor.triad};
  }
  floor.compute = context.floor_steps > 0
                      ? measureComputeFloor(*first.kernel, c, context.floor_steps)
                      : ComputeFloorRecord{"not measured (no step budget)"};
  completeFloor(floor, time_s);
  floor.cost_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.floor = floor;
}

} // namespace

CaseRecord runCase(const CaseSpec &spec, const CaseContext &context) {
  validateCase(spec);
  CaseRecord record;
  record.id = spec.id;
  record.op = spec.op;
  record.dtype = caseType(spec);
  record.rows = spec.shape.rows;
  record.cols = spec.shape.cols;

  check::Case c = check::makeCase(spec.program, spec.shape); // dense, aligned, touched
  writeCaseFiles(record, spec, c, context.bundle_dir);
  Oracle oracle(c);
  std::vector<std::string> input_bytes = inputBytes(c);
  OracleMemo oracle_memo;

  std::vector<BoundVariant> variants =
      bindVariants(spec, c, context.configs, *context.peers, context.only);
  if (variants.empty())
    throw Error(Error::Kind::Bind, "case " + spec.id + ": no variant left to run");
  for (BoundVariant &v : variants) {
    // One output: outputs/<case>/<variant>.npy; several: a file per output
    // in outputs/<case>/<variant>/, output_file naming the first.
    std::string stem = "outputs/" + spec.id + "/" + v.record.name;
    if (spec.program.outputs.size() > 1)
      for (const Output &out : spec.program.outputs)
        v.record.output_files.push_back({out.name, stem + "/" + out.name + ".npy"});
    v.record.output_file =
        v.record.output_files.empty() ? stem + ".npy" : v.record.output_files[0].file;
    record.variants.push_back(v.record);
  }

  std::vector<std::vector<int>> orders = visitOrders(static_cast<int>(variants.size()));
  std::map<std::string, std::string> first_sha;
  int visits_in_case = static_cast<int>(orders.size() * variants.size()), done = 0;
  for (size_t r = 0; r < orders.size(); ++r) {
    RoundRecord round;
    for (int index : orders[r]) {
      BoundVariant &variant = variants[index];
      round.order.push_back(variant.record.name);
      if (context.progress)
        context.progress({variant.record.name, static_cast<int>(r) + 1,
                          static_cast<int>(orders.size()), done, visits_in_case});
      prefill(c);
      bool guards_before = guardsIntact(c);
      VisitRecord visit;
      visit.variant = variant.record.name;
      visit.timing = timeVisit(*variant.callable, context.protocol);
      variant.callable->finish();
      bool first = !first_sha.count(variant.record.name);
      checkVisit(visit, c, oracle, oracle_memo, input_bytes, variant, first_sha, guards_before);
      if (first)
        writeOutputs(variant.record, c, context.bundle_dir);
      round.visits.push_back(std::move(visit));
      ++done;
    }
    record.rounds.push_back(std::move(round));
  }
  record.machine_code = readMachineCode(spec.id, variants, context.bundle_dir);
  checkBitIdentity(record, first_sha);
  summarize(record);
  addFloorAndRoofline(record, context, variants.front(), c);
  return record;
}

} // namespace lanejit::bench
