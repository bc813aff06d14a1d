// Reading bundle.json into the Bundle model. Every field the format defines
// is checked for presence and type here, so the later steps only judge
// values. Nothing here throws on bad content.
#include "checks.h"
#include "json_fields.h"

#include <cmath>
#include <set>

namespace lanejit::audit {
namespace {

using nlohmann::json;

// Every number anywhere in the document must be finite (the format's rule);
// JSON has no NaN literal, but a writer may emit 1e999.
void checkFinite(const json &value, const std::string &pointer, Findings &findings) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    findings.fail(kind::kNotANumber, "bundle.json", pointer + " is not finite");
    return;
  }
  if (value.is_object())
    for (auto it = value.begin(); it != value.end(); ++it)
      checkFinite(it.value(), pointer + "/" + it.key(), findings);
  if (value.is_array())
    for (size_t i = 0; i < value.size(); ++i)
      checkFinite(value[i], pointer + "/" + std::to_string(i), findings);
}

std::string inQuotes(const std::string &name) {
  return "'" + name + "'";
}

VisitChecks readChecks(const json &visit, const std::string &where, bool lanejit,
                       FieldReader &fields) {
  VisitChecks checks;
  const json *object = fields.object(visit, "checks", where);
  if (!object)
    return checks;
  checks.oracle_failures = fields.integer(*object, "oracle_failures", where);
  checks.oracle_max_abs_error = fields.number(*object, "oracle_max_abs_error", where);
  checks.inputs_unchanged = fields.boolean(*object, "inputs_unchanged", where);
  checks.guards_intact = fields.boolean(*object, "guards_intact", where);
  checks.output_sha256 = fields.string(*object, "output_sha256", where);
  if (lanejit || fields.optionalMember(*object, "report_matches_claims"))
    checks.report_matches_claims = fields.boolean(*object, "report_matches_claims", where);
  if (lanejit || fields.optionalMember(*object, "bits_match_default"))
    checks.bits_match_default = fields.boolean(*object, "bits_match_default", where);
  return checks;
}

Visit readVisit(const json &value, const std::string &round_where, size_t index, const Case &c,
                FieldReader &fields) {
  Visit visit;
  visit.where = round_where + " visit " + std::to_string(index);
  visit.variant = fields.string(value, "variant", visit.where).value_or("");
  visit.where += " (variant " + inQuotes(visit.variant) + ")";
  visit.reps = fields.integer(value, "reps", visit.where);
  if (const json *samples = fields.array(value, "samples_s", visit.where)) {
    visit.samples_valid = !samples->empty();
    for (size_t i = 0; i < samples->size(); ++i) {
      auto sample =
          fields.numberValue((*samples)[i], visit.where, "samples_s[" + std::to_string(i) + "]");
      visit.samples_valid = visit.samples_valid && sample.has_value();
      visit.samples_s.push_back(sample.value_or(0));
    }
    if (samples->empty())
      fields.findings().fail(kind::kMalformed, visit.where, "samples_s is empty");
  }
  visit.value_s = fields.number(value, "value_s", visit.where);
  bool lanejit = false;
  for (const Variant &v : c.variants)
    lanejit = lanejit || (v.name == visit.variant && v.kind == "lanejit");
  visit.checks = readChecks(value, visit.where, lanejit, fields);
  visit.status = fields.string(value, "status", visit.where);
  return visit;
}

Round readRound(const json &value, size_t index, const Case &c, FieldReader &fields) {
  Round round;
  round.where = c.where + " round " + std::to_string(index);
  if (const json *order = fields.array(value, "order", round.where)) {
    round.order_valid = true;
    for (const json &name : *order) {
      if (!name.is_string()) {
        fields.findings().fail(kind::kMalformed, round.where,
                               "order entry " + describe(name) + " is not a variant name");
        round.order_valid = false;
        continue;
      }
      round.order.push_back(name.get<std::string>());
    }
  }
  if (const json *visits = fields.array(value, "visits", round.where))
    for (size_t i = 0; i < visits->size(); ++i)
      round.visits.push_back(readVisit((*visits)[i], round.where, i, c, fields));
  return round;
}

void readClaims(const json &entry, const std::string &where, Variant &v, FieldReader &fields) {
  static const std::set<std::string> relations{"==", "!=", ">", ">=", "<", "<="};
  const json *claims = fields.array(entry, "claims", where);
  if (!claims)
    return;
  for (size_t i = 0; i < claims->size(); ++i) {
    std::string claim_where = where + " claim " + std::to_string(i);
    auto stat = fields.string((*claims)[i], "stat", claim_where);
    auto relation = fields.string((*claims)[i], "relation", claim_where);
    auto value = fields.number((*claims)[i], "value", claim_where);
    auto observed = fields.number((*claims)[i], "observed", claim_where);
    if (relation && !relations.count(*relation))
      fields.findings().fail(kind::kMalformed, claim_where,
                             "relation '" + *relation + "' is not one of == != > >= < <=");
    if (stat && relation && relations.count(*relation) && value && observed)
      v.claims.push_back({*stat, *relation, *value, *observed});
  }
}

void readVariants(const json &value, Case &c, FieldReader &fields) {
  const json *variants = fields.array(value, "variants", c.where);
  if (!variants)
    return;
  c.variants_valid = !variants->empty();
  std::set<std::string> names;
  for (size_t i = 0; i < variants->size(); ++i) {
    const json &entry = (*variants)[i];
    std::string where = c.where + " variant " + std::to_string(i);
    Variant v;
    auto name = fields.string(entry, "name", where);
    auto kind = fields.string(entry, "kind", where);
    auto output = fields.string(entry, "output_file", where);
    if (!name || !kind || !output) {
      c.variants_valid = false;
      continue;
    }
    v.name = *name;
    v.kind = *kind;
    v.output_file = *output;
    where += " (" + inQuotes(v.name) + ")";
    // Only a program of several outputs has output_files.
    if (fields.optionalMember(entry, "output_files"))
      if (const json *files = fields.array(entry, "output_files", where))
        for (size_t o = 0; o < files->size(); ++o) {
          std::string file_where = where + " output_files " + std::to_string(o);
          auto out_name = fields.string((*files)[o], "name", file_where);
          auto file = fields.string((*files)[o], "file", file_where);
          v.output_files.push_back({out_name.value_or(""), file.value_or("")});
        }
    if (v.kind == "lanejit") {
      v.options = fields.string(entry, "options", where).value_or("");
      readClaims(entry, where, v, fields);
    } else if (v.kind != "peer") {
      fields.findings().fail(kind::kMalformed, where,
                             "kind " + inQuotes(v.kind) + " is neither 'lanejit' nor 'peer'");
    }
    if (!names.insert(v.name).second) {
      fields.findings().fail(kind::kMalformed, where, "variant name appears twice");
      c.variants_valid = false;
    }
    c.variants.push_back(std::move(v));
  }
  if (variants->empty())
    fields.findings().fail(kind::kMalformed, c.where, "no variants");
}

void readSummary(const json &value, Case &c, FieldReader &fields) {
  std::string where = c.where + " summary";
  const json *summary = fields.object(value, "summary", c.where);
  if (!summary)
    return;
  if (const json *times = fields.object(*summary, "time_s", where))
    for (auto it = times->begin(); it != times->end(); ++it)
      c.time_s[it.key()] = fields.numberValue(it.value(), where, "time_s." + it.key());
  if (const json *ratios = fields.array(*summary, "ratios", where))
    for (size_t i = 0; i < ratios->size(); ++i) {
      const json &entry = (*ratios)[i];
      Ratio r;
      r.where = where + " ratio " + std::to_string(i);
      r.numerator = fields.string(entry, "numerator", r.where).value_or("");
      r.denominator = fields.string(entry, "denominator", r.where).value_or("");
      r.where += " (" + r.numerator + "/" + r.denominator + ")";
      r.median = fields.number(entry, "median", r.where);
      r.min = fields.number(entry, "min", r.where);
      r.max = fields.number(entry, "max", r.where);
      r.wins = fields.integer(entry, "wins", r.where);
      r.rounds = fields.integer(entry, "rounds", r.where);
      c.ratios.push_back(std::move(r));
    }
  if (const json *compile = fields.optionalMember(*summary, "compile_ms"))
    for (const char *key : {"cold", "warm", "cached"})
      c.compile_ms[key] = fields.number(*compile, key, where + " compile_ms");
  if (const json *floor = fields.optionalMember(*summary, "floor"))
    c.floor = *floor;
  if (const json *roof = fields.optionalMember(*summary, "roofline")) {
    std::string roof_where = where + " roofline";
    Roofline r;
    r.bytes = fields.number(*roof, "bytes", roof_where);
    r.copy_bytes_per_s = fields.number(*roof, "copy_bytes_per_s", roof_where);
    r.triad_bytes_per_s = fields.number(*roof, "triad_bytes_per_s", roof_where);
    r.min_time_s = fields.number(*roof, "min_time_s", roof_where);
    r.ratio = fields.number(*roof, "ratio", roof_where);
    for (auto [key, stream] :
         {std::pair{"copy_samples", &r.copy}, std::pair{"triad_samples", &r.triad}}) {
      const json *s = fields.object(*roof, key, roof_where);
      if (!s)
        continue;
      std::string where_s = roof_where + " " + key;
      Stream st;
      st.bytes_per_pass = fields.integer(*s, "bytes_per_pass", where_s);
      st.passes = fields.integer(*s, "passes", where_s);
      if (const json *seconds = fields.array(*s, "seconds", where_s)) {
        st.seconds_valid = !seconds->empty();
        for (size_t i = 0; i < seconds->size(); ++i) {
          auto v = fields.numberValue((*seconds)[i], where_s, "seconds[" + std::to_string(i) + "]");
          st.seconds_valid = st.seconds_valid && v && *v > 0;
          st.seconds.push_back(v.value_or(0));
        }
      }
      *stream = st;
    }
    c.roofline = r;
  }
}

Case readCase(const json &value, size_t index, FieldReader &fields) {
  Case c;
  c.where = "case " + std::to_string(index);
  if (auto id = fields.string(value, "id", c.where)) {
    c.id = *id;
    c.where = "case " + inQuotes(c.id);
  }
  c.op = fields.string(value, "op", c.where).value_or("");
  if (value.contains("dtype")) // bundles before bf16 cases have none: f32
    c.dtype = fields.string(value, "dtype", c.where).value_or("");
  c.rows = fields.integer(value, "rows", c.where);
  c.cols = fields.integer(value, "cols", c.where);
  for (auto *dim : {&c.rows, &c.cols})
    if (*dim && **dim < 1) {
      fields.findings().fail(kind::kMalformed, c.where,
                             "rows and cols must be positive, got " + std::to_string(**dim));
      dim->reset();
    }
  c.program_file = fields.string(value, "program_file", c.where).value_or("");
  if (const json *inputs = fields.array(value, "inputs", c.where))
    for (size_t i = 0; i < inputs->size(); ++i) {
      std::string where = c.where + " input " + std::to_string(i);
      auto name = fields.string((*inputs)[i], "name", where);
      auto file = fields.string((*inputs)[i], "file", where);
      c.inputs.push_back({name.value_or(""), file.value_or("")});
    }
  readVariants(value, c, fields);
  if (const json *rounds = fields.array(value, "rounds", c.where)) {
    for (size_t i = 0; i < rounds->size(); ++i)
      c.rounds.push_back(readRound((*rounds)[i], i, c, fields));
    if (rounds->empty())
      fields.findings().fail(kind::kMissingVisit, c.where, "no rounds");
  }
  readSummary(value, c, fields);
  if (const json *code = fields.optionalMember(value, "machine_code"))
    c.machine_code = *code;
  return c;
}

// The environment record (docs/bench-bundle.md): what ran where. Only the
// binaries are compared later; the rest must be present and well typed.
void readEnvironment(const json &root, Bundle &bundle, FieldReader &fields) {
  const json *env = fields.object(root, "environment", "bundle.json");
  if (!env)
    return;
  bundle.environment = *env;
  for (const char *key : {"cpu_model", "cpu_features", "llvm_version", "git_commit"})
    fields.string(*env, key, "environment");
  if (auto cores = fields.integer(*env, "cores", "environment"); cores && *cores < 1)
    fields.findings().fail(kind::kMalformed, "environment", "cores must be at least 1");
  for (const char *key : {"load_before", "load_after"})
    if (const json *load = fields.array(*env, key, "environment")) {
      if (load->size() != 3)
        fields.findings().fail(kind::kMalformed, "environment",
                               std::string(key) + " must hold three load averages");
      for (size_t i = 0; i < load->size(); ++i)
        fields.numberValue((*load)[i], "environment", key + ("[" + std::to_string(i) + "]"));
    }
  fields.array(*env, "binaries", "environment");
}

void readProtocol(const json &root, Bundle &bundle, FieldReader &fields) {
  const json *protocol = fields.object(root, "protocol", "bundle.json");
  if (!protocol)
    return;
  bundle.protocol.samples = fields.integer(*protocol, "samples", "protocol");
  bundle.protocol.max_reps = fields.integer(*protocol, "max_reps", "protocol");
  bundle.protocol.atol = fields.number(*protocol, "atol", "protocol");
  bundle.protocol.rtol = fields.number(*protocol, "rtol", "protocol");
  bundle.protocol.warmup_s = fields.number(*protocol, "warmup_s", "protocol");
  bundle.protocol.target_s = fields.number(*protocol, "target_s", "protocol");
  bundle.protocol.name = fields.string(*protocol, "name", "protocol");
}

} // namespace

std::optional<Bundle> readBundle(const std::filesystem::path &dir, Findings &findings) {
  std::optional<std::string> text = readFileBytes(dir / "bundle.json");
  if (!text) {
    findings.fail(kind::kMissingFile, "bundle.json", "cannot be read in " + dir.string());
    return std::nullopt;
  }
  json root;
  try {
    root = json::parse(*text);
  } catch (const json::exception &e) {
    findings.fail(kind::kMalformed, "bundle.json", std::string("not valid JSON: ") + e.what());
    return std::nullopt;
  }
  FieldReader fields(findings);
  auto format = fields.string(root, "format", "bundle.json");
  if (!format)
    return std::nullopt;
  if (*format != "lanejit-bench/1") {
    findings.fail(kind::kMalformed, "bundle.json",
                  "format is '" + *format + "', the audit reads 'lanejit-bench/1'");
    return std::nullopt;
  }
  checkFinite(root, "", findings);
  Bundle bundle;
  bundle.status = fields.string(root, "status", "bundle.json").value_or("");
  readProtocol(root, bundle, fields);
  readEnvironment(root, bundle, fields);
  if (const json *files = fields.object(root, "files", "bundle.json"))
    for (auto it = files->begin(); it != files->end(); ++it) {
      if (it.value().is_string())
        bundle.files[it.key()] = it.value().get<std::string>();
      else
        findings.fail(kind::kMalformed, "files",
                      "hash of '" + it.key() + "' is " + describe(it.value()) + ", not a string");
    }
  if (const json *cases = fields.array(root, "cases", "bundle.json")) {
    std::set<std::string> ids;
    for (size_t i = 0; i < cases->size(); ++i) {
      bundle.cases.push_back(readCase((*cases)[i], i, fields));
      if (!ids.insert(bundle.cases.back().id).second)
        findings.fail(kind::kMalformed, bundle.cases.back().where, "case id appears twice");
    }
    if (cases->empty())
      findings.fail(kind::kMalformed, "bundle.json", "no cases");
  }
  return bundle;
}

} // namespace lanejit::audit
