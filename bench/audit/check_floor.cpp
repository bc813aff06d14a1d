// check_floor.cpp: the per-case floor re-derived from its raw numbers
// (summary.floor, docs/bench-bundle.md): the memory part from the stream
// samples, the per-call instruction counts from the stepped calls, the
// clock from its samples, the compute part, the floor, its bound and the
// ratio against the case's recorded (and separately re-derived) time.
#include "checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lanejit::audit {
namespace {

using nlohmann::json;
constexpr double kTolerance = 1e-9;
constexpr int64_t kColumnPeriod = 256; // the bench's column extrapolation step

std::string num(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

// A finite number member, or nullopt after reporting it.
std::optional<double> number(const json &object, const char *key, const std::string &where,
                             Findings &findings) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number() || !std::isfinite(it->get<double>())) {
    findings.fail(kind::kWrongFloor, where, std::string(key) + " is missing or not a number");
    return std::nullopt;
  }
  return it->get<double>();
}

void expectClose(double recorded, double derived, const std::string &what,
                 const std::string &where, Findings &findings) {
  if (!relativelyClose(recorded, derived, kTolerance))
    findings.fail(kind::kWrongFloor, where,
                  what + " is " + num(recorded) + " but its inputs give " + num(derived));
}

// The best rate of a stream's samples, or nullopt when they are malformed.
std::optional<double> bestRate(const json &stream, double bytes, const std::string &where,
                               Findings &findings) {
  if (!stream.is_object() || !stream.value("bytes_per_pass", json()).is_number_integer() ||
      !stream.value("passes", json()).is_number_integer() ||
      !stream.value("seconds", json()).is_array() || stream["seconds"].empty()) {
    findings.fail(kind::kWrongFloor, where, "stream samples are malformed");
    return std::nullopt;
  }
  double per_pass = stream["bytes_per_pass"].get<double>(), passes = stream["passes"].get<double>();
  // Each stream's arrays hold at least 16 floats: a tiny case's pass moves
  // up to 192 bytes (triad), more than its own.
  if (std::abs(per_pass - bytes) > 64 && !(bytes < 192 && per_pass <= 192))
    findings.fail(kind::kWrongFloor, where,
                  "a stream moved " + num(per_pass) + " bytes per pass, not the case's " +
                      num(bytes));
  double best = 0;
  for (const json &s : stream["seconds"]) {
    if (!s.is_number() || !(s.get<double>() > 0)) {
      findings.fail(kind::kWrongFloor, where, "a stream sample is not a positive time");
      return std::nullopt;
    }
    best = std::max(best, per_pass * passes / s.get<double>());
  }
  return best;
}

// The memory part's seconds, or nullopt when unavailable or unjudgeable.
std::optional<double> memoryPart(const json &memory, const std::string &where, Findings &findings) {
  if (memory.contains("unavailable"))
    return std::nullopt;
  auto bytes = number(memory, "bytes", where, findings);
  auto copy = number(memory, "copy_bytes_per_s", where, findings);
  auto triad = number(memory, "triad_bytes_per_s", where, findings);
  auto seconds = number(memory, "seconds", where, findings);
  if (!bytes || !copy || !triad || !seconds)
    return std::nullopt;
  if (!(*bytes > 0 && *copy > 0 && *triad > 0)) {
    findings.fail(kind::kWrongFloor, where, "bytes and the bandwidths must be positive");
    return std::nullopt;
  }
  if (auto best = bestRate(memory.value("copy_samples", json()), *bytes, where, findings))
    expectClose(*copy, *best, "copy_bytes_per_s", where, findings);
  if (auto best = bestRate(memory.value("triad_samples", json()), *bytes, where, findings))
    expectClose(*triad, *best, "triad_bytes_per_s", where, findings);
  double derived = *bytes / std::max(*copy, *triad);
  expectClose(*seconds, derived, "memory seconds (bytes / max(copy, triad))", where, findings);
  return derived;
}

struct Stepped {
  int64_t cols, rows;
  double instructions, vector;
};

// One call of rows x cols from the stepped calls, by the recorded method:
// {instructions, vector}, or nullopt (reported) when they do not fit it.
std::optional<std::pair<double, double>> perCall(const std::string &method, int64_t k,
                                                 const std::vector<Stepped> &s, int64_t rows,
                                                 int64_t cols, const std::string &where,
                                                 Findings &findings) {
  auto bad = [&](const std::string &why) {
    findings.fail(kind::kWrongFloor, where, "stepped calls do not fit '" + method + "': " + why);
    return std::nullopt;
  };
  auto pick = [&](const Stepped &x) { return std::pair{x.instructions, x.vector}; };
  auto combine = [](auto f, std::pair<double, double> a, std::pair<double, double> b,
                    std::pair<double, double> c) {
    return std::pair{f(a.first, b.first, c.first), f(a.second, b.second, c.second)};
  };
  double groups = static_cast<double>(rows) / static_cast<double>(k);
  if (method == "whole call") {
    if (s.size() != 1 || s[0].cols != cols || s[0].rows != rows)
      return bad("want one call of the case's rows and columns");
    return pick(s[0]);
  }
  if (method == "rows") {
    if (s.size() != 2 || s[0].cols != cols || s[1].cols != cols || s[0].rows != k ||
        s[1].rows != 2 * k || rows < 2 * k)
      return bad("want the case's columns over row groups 1 and 2");
    auto f = [&](double a, double b, double) { return 2 * a - b + groups * (b - a); };
    return combine(f, pick(s[0]), pick(s[1]), pick(s[1]));
  }
  if (method == "flat rows") {
    // One row of R x C elements through an entry for one C: two row counts
    // whose elements are short of R x C by whole periods of 256.
    if (s.size() != 2 || s[0].cols != cols || s[1].cols != cols || s[0].rows < 1 ||
        s[1].rows <= s[0].rows || s[1].rows >= rows ||
        (s[0].rows * cols) % kColumnPeriod != (rows * cols) % kColumnPeriod ||
        ((s[1].rows - s[0].rows) * cols) % kColumnPeriod != 0)
      return bad("want two row counts short of R x C elements by whole periods of 256");
    double t = static_cast<double>(rows - s[0].rows) / static_cast<double>(s[1].rows - s[0].rows);
    auto f = [&](double a, double b, double) { return a + (b - a) * t; };
    return combine(f, pick(s[0]), pick(s[1]), pick(s[1]));
  }
  if (s.empty())
    return bad("no stepped calls");
  int64_t c1 = s[0].cols, c2 = c1 + kColumnPeriod;
  // Whole periods apart from C, so the line through them reaches C's count.
  if (c1 % kColumnPeriod != cols % kColumnPeriod || c1 < 1 || c2 >= cols)
    return bad("the stepped columns are not short of C by whole periods of 256");
  double t = static_cast<double>(cols - c1) / static_cast<double>(c2 - c1);
  if (method == "columns") {
    if (s.size() != 2 || s[0].rows != rows || s[1].rows != rows || s[1].cols != c2)
      return bad("want the case's rows at two column counts");
    auto f = [&](double a, double b, double) { return a + (b - a) * t; };
    return combine(f, pick(s[0]), pick(s[1]), pick(s[1]));
  }
  if (method == "rows and columns") {
    if (s.size() != 3 || s[0].rows != k || s[1].cols != c1 || s[1].rows != 2 * k ||
        s[2].cols != c2 || s[2].rows != k || rows < 2 * k)
      return bad("want row groups 1 and 2 at the short columns, then group 1 at the longer");
    auto f = [&](double a, double b, double d) {
      double fixed = 2 * a - b, g1 = b - a, g2 = d - fixed;
      return fixed + groups * (g1 + (g2 - g1) * t);
    };
    return combine(f, pick(s[0]), pick(s[1]), pick(s[2]));
  }
  findings.fail(kind::kWrongFloor, where, "unknown method '" + method + "'");
  return std::nullopt;
}

// The compute part's seconds, or nullopt when unavailable or unjudgeable.
std::optional<double> computePart(const Case &c, const json &compute, const std::string &where,
                                  Findings &findings) {
  if (compute.contains("unavailable"))
    return std::nullopt;
  if (!compute.value("method", json()).is_string() ||
      !compute.value("row_group", json()).is_number_integer() ||
      !compute.value("stepped", json()).is_array() ||
      !compute.value("issue_width", json()).is_number_integer() ||
      !compute.value("clock_samples", json()).is_array()) {
    findings.fail(kind::kWrongFloor, where,
                  "method, row_group, stepped, issue_width or clock_samples missing");
    return std::nullopt;
  }
  int64_t k = compute["row_group"].get<int64_t>(), width = compute["issue_width"].get<int64_t>();
  if (k < 1 || width < 1) {
    findings.fail(kind::kWrongFloor, where, "row_group and issue_width must be positive");
    return std::nullopt;
  }
  std::vector<Stepped> stepped;
  for (const json &s : compute["stepped"]) {
    bool ints = s.is_object();
    for (const char *key : {"cols", "rows", "instructions", "vector"})
      ints = ints && s.value(key, json()).is_number_integer() && s[key].get<int64_t>() >= 0;
    if (!ints || s["vector"].get<int64_t>() > s["instructions"].get<int64_t>()) {
      findings.fail(kind::kWrongFloor, where,
                    "a stepped call is malformed (counts must be integers, vector <= all)");
      return std::nullopt;
    }
    stepped.push_back({s["cols"].get<int64_t>(), s["rows"].get<int64_t>(),
                       s["instructions"].get<double>(), s["vector"].get<double>()});
  }
  // The call extrapolated to: the case's R x C, or one row of R x C
  // elements (a kernel that runs dense rows as one row).
  int64_t rows = compute.value("target_rows", int64_t{0}), cols = compute.value("target_cols",
                                                                                int64_t{0});
  if (!(rows == *c.rows && cols == *c.cols) && !(rows == 1 && cols == *c.rows * *c.cols)) {
    findings.fail(kind::kWrongFloor, where,
                  "target_rows x target_cols is " + std::to_string(rows) + " x " +
                      std::to_string(cols) + ", neither R x C nor 1 x RC");
    return std::nullopt;
  }
  auto counts =
      perCall(compute["method"].get<std::string>(), k, stepped, rows, cols, where, findings);
  auto instructions = number(compute, "instructions_per_call", where, findings);
  auto vector = number(compute, "vector_per_call", where, findings);
  auto clock_hz = number(compute, "clock_hz", where, findings);
  auto seconds = number(compute, "seconds", where, findings);
  if (!counts || !instructions || !vector || !clock_hz || !seconds)
    return std::nullopt;
  expectClose(*instructions, counts->first, "instructions_per_call", where, findings);
  expectClose(*vector, counts->second, "vector_per_call", where, findings);
  // The clock is the fastest dependent-add sample's.
  double best = 0;
  for (const json &s : compute["clock_samples"]) {
    if (!s.is_object() || !s.value("cycles", json()).is_number() ||
        !s.value("seconds", json()).is_number() || !(s["seconds"].get<double>() > 0)) {
      findings.fail(kind::kWrongFloor, where, "a clock sample is malformed");
      return std::nullopt;
    }
    best = std::max(best, s["cycles"].get<double>() / s["seconds"].get<double>());
  }
  if (!(best > 0)) {
    findings.fail(kind::kWrongFloor, where, "no clock samples");
    return std::nullopt;
  }
  expectClose(*clock_hz, best, "clock_hz (the fastest sample's cycles / seconds)", where,
              findings);
  double derived = counts->second / static_cast<double>(width) / best;
  expectClose(*seconds, derived, "compute seconds (vector / issue_width / clock)", where,
              findings);
  return derived;
}

} // namespace

void checkFloor(const Case &c, Findings &findings) {
  if (c.floor.is_null() || !c.rows || !c.cols)
    return;
  const std::string where = c.where + " summary floor";
  const json &f = c.floor;
  if (!f.is_object() || !f.value("memory", json()).is_object() ||
      !f.value("compute", json()).is_object() || !f.value("bound", json()).is_string()) {
    findings.fail(kind::kWrongFloor, where, "memory, compute or bound missing");
    return;
  }
  std::optional<double> memory = memoryPart(f["memory"], where + " memory", findings);
  std::optional<double> compute = computePart(c, f["compute"], where + " compute", findings);
  bool memory_measured = !f["memory"].contains("unavailable");
  bool compute_measured = !f["compute"].contains("unavailable");
  if ((memory_measured && !memory) || (compute_measured && !compute))
    return; // a part could not be judged: already reported
  double floor = std::max(memory.value_or(0), compute.value_or(0));
  std::string bound = memory && compute ? (*compute > *memory ? "compute" : "memory")
                      : memory          ? "memory only"
                      : compute         ? "compute only"
                                        : "none";
  if (!(floor > 0))
    bound = "none";
  if (f["bound"].get<std::string>() != bound)
    findings.fail(kind::kWrongFloor, where,
                  "bound is '" + f["bound"].get<std::string>() + "' but the parts give '" +
                      bound + "'");
  if (bound == "none")
    return;
  auto floor_s = number(f, "floor_s", where, findings);
  auto ratio = number(f, "ratio", where, findings);
  if (floor_s)
    expectClose(*floor_s, floor, "floor_s (the larger part)", where, findings);
  auto first = std::find_if(c.variants.begin(), c.variants.end(),
                            [](const Variant &v) { return v.kind == "lanejit"; });
  if (first == c.variants.end()) {
    findings.fail(kind::kWrongFloor, where, "the case has no lanejit variant to compare");
    return;
  }
  auto time = c.time_s.find(first->name);
  if (ratio && time != c.time_s.end() && time->second)
    expectClose(*ratio, *time->second / floor, "ratio (time_s." + first->name + " / floor)",
                where, findings);
}

} // namespace lanejit::audit
