// CompileOptions: environment variables and the cache key.
#include <lanejit/error.h>
#include <lanejit/options.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>
#include <type_traits>

namespace lanejit {
namespace {

const char *env(const std::string &name) {
  const char *v = std::getenv(name.c_str());
  return v && *v ? v : nullptr;
}

bool truthy(const std::string &name, const char *value) {
  std::string v = value;
  if (v == "1" || v == "true" || v == "on" || v == "yes")
    return true;
  if (v == "0" || v == "false" || v == "off" || v == "no")
    return false;
  throw Error(Error::Kind::Compile, name + "=" + v + ": expected 1/0, true/false, on/off");
}

// The boolean switches of src/options/switches.def. Their environment and CLI name
// is the field's name in capitals.
struct BoolSwitch {
  std::string name; // LANEJIT_ENABLE_<name> / LANEJIT_DISABLE_<name>
  bool CompileOptions::*field;
  bool changes_code; // part of the cache key
};

std::string capitals(std::string field) {
  for (char &c : field)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return field;
}

const std::vector<BoolSwitch> &boolSwitches() {
  static const std::vector<BoolSwitch> list = [] {
    std::vector<BoolSwitch> switches;
    auto add = [&](const char *field, auto member, bool changesCode) {
      if constexpr (std::is_same_v<decltype(member), bool CompileOptions::*>)
        switches.push_back({capitals(field), member, changesCode});
    };
#define LANEJIT_LOWERING_PASS(name, field, summary, call) add(#field, &CompileOptions::field, true);
#define LANEJIT_CODEGEN_SWITCH(field, summary) add(#field, &CompileOptions::field, true);
#define LANEJIT_SWITCH(field, summary) add(#field, &CompileOptions::field, false);
#include "options/switches.def"
    return switches;
  }();
  return list;
}

// Names a switch had before it was named after its field; still read from
// the environment, the CLI and option keys in older bundles.
std::string currentName(const std::string &name) {
  return name == "FULL_PACKET_SPECIALIZATION" ? "SPECIALIZE_FULL_PACKETS" : name;
}

constexpr const char *kInlineSwitch = "INLINE_PACKET_BODIES";
const char *const kInlineNames[] = {"cost-rule", "always", "never"}; // Inline's order

int integer(const std::string &name, int lo, int hi, int fallback) {
  const char *v = env(name);
  if (!v)
    return fallback;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi)
    throw Error(Error::Kind::Compile, name + "=" + v + ": expected an integer in [" +
                                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(n);
}

} // namespace

CompileOptions CompileOptions::fromEnvironment(CompileOptions o) {
  // Enable first, then disable, so disable wins.
  for (const char *prefix : {"LANEJIT_ENABLE_", "LANEJIT_DISABLE_"})
    for (const std::string &name : switchNames()) {
      std::string var = prefix + name;
      if (const char *v = env(var); v && truthy(var, v))
        o.setSwitch(name, prefix == std::string("LANEJIT_ENABLE_"));
    }
  o.lanes = integer("LANEJIT_LANES", 0, 16, o.lanes);
  o.block_rows = integer("LANEJIT_BLOCK_ROWS", 1, 1 << 20, o.block_rows);
  o.opt_level = integer("LANEJIT_OPT_LEVEL", 0, 3, o.opt_level);
  o.stream_min_kib = integer("LANEJIT_STREAM_MIN_KIB", 0, 1 << 30, o.stream_min_kib);
  o.prefetch_min_kib = integer("LANEJIT_PREFETCH_MIN_KIB", 0, 1 << 30, o.prefetch_min_kib);
  if (env("LANEJIT_NUM_THREADS"))
    o.threads = integer("LANEJIT_NUM_THREADS", 1, 256, 1);
  if (const char *v = env("LANEJIT_TARGET_TRIPLE"))
    o.target_triple = v;
  if (const char *v = env("LANEJIT_TARGET_CPU"))
    o.target_cpu = v;
  if (const char *v = env("LANEJIT_TARGET_FEATURES"))
    o.target_features = v;
  if (const char *v = env("LANEJIT_DISABLE_PASS")) {
    std::stringstream in(v);
    std::string pass;
    while (std::getline(in, pass, ','))
      if (!pass.empty())
        o.disabled_passes.push_back(pass);
  }
  return o;
}

std::vector<std::string> CompileOptions::switchNames() {
  std::vector<std::string> names;
  for (const BoolSwitch &s : boolSwitches())
    names.push_back(s.name);
  names.push_back(kInlineSwitch);
  return names;
}

void CompileOptions::setSwitch(const std::string &given, bool on) {
  std::string name = currentName(given);
  for (const BoolSwitch &s : boolSwitches())
    if (name == s.name) {
      this->*s.field = on;
      return;
    }
  if (name == kInlineSwitch) {
    // Three-way: enable forces inlining, disable forces helpers; the cost
    // rule applies when neither is given.
    inline_packet_bodies = on ? Inline::Always : Inline::Never;
    return;
  }
  std::string known;
  for (const std::string &n : switchNames())
    known += (known.empty() ? "" : ", ") + n;
  throw Error(Error::Kind::Compile, "unknown switch '" + name + "' (known: " + known + ")");
}

CompileOptions CompileOptions::fromEnvironment() {
  return fromEnvironment(CompileOptions());
}

// "lanes=16;FUSE_POINTWISE=1;...;INLINE_PACKET_BODIES=cost-rule;opt=2;
// cpu=znver4;features=...;off=cse,": every field that changes code, nothing
// else (block_rows and the dump/time switches do not). "triple=" and "cpu="
// appear only when set, so keys written before they existed still read back.
std::string CompileOptions::key() const {
  std::ostringstream k;
  k << "lanes=" << lanes << ";";
  for (const BoolSwitch &s : boolSwitches())
    if (s.changes_code)
      k << s.name << "=" << (this->*s.field ? 1 : 0) << ";";
  k << kInlineSwitch << "=" << kInlineNames[static_cast<int>(inline_packet_bodies)] << ";";
  k << "opt=" << opt_level << ";";
  if (stream_stores) // the threshold only matters with the switch on
    k << "stream_kib=" << stream_min_kib << ";";
  if (prefetch_next_row)
    k << "prefetch_kib=" << prefetch_min_kib << ";";
  if (!target_triple.empty())
    k << "triple=" << target_triple << ";";
  if (!target_cpu.empty())
    k << "cpu=" << target_cpu << ";";
  k << "features=" << target_features << ";off=";
  for (const std::string &p : disabled_passes)
    k << p << ",";
  return k.str();
}

CompileOptions CompileOptions::fromKey(const std::string &key) {
  auto bad = [&](const std::string &why) {
    return Error(Error::Kind::Compile, "not a CompileOptions key (" + why + "): " + key);
  };
  std::map<std::string, std::string> fields;
  std::stringstream in(key);
  std::string part;
  std::string canonical; // `key` with current switch names
  while (std::getline(in, part, ';')) {
    size_t eq = part.find('=');
    std::string name = eq == std::string::npos ? part : currentName(part.substr(0, eq));
    if (eq == std::string::npos || !fields.emplace(name, part.substr(eq + 1)).second)
      throw bad("field '" + part + "'");
    canonical += name + part.substr(eq) + ";";
  }
  if (!canonical.empty() && key.back() != ';')
    canonical.pop_back(); // the last field has no ';' after it
  auto take = [&](const std::string &name) {
    auto it = fields.find(name);
    if (it == fields.end())
      throw bad("no " + name);
    std::string v = it->second;
    fields.erase(it);
    return v;
  };
  auto number = [&](const std::string &name) {
    std::string v = take(name);
    char *end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end)
      throw bad(name + " is not an integer");
    return static_cast<int>(n);
  };
  CompileOptions o;
  o.lanes = number("lanes");
  // A key written before a switch existed lacks it: that compiler worked as
  // with the switch off.
  std::vector<std::string> absent; // ";NAME=0;" as o.key() will write it
  for (const BoolSwitch &s : boolSwitches())
    if (s.changes_code) {
      if (!fields.count(s.name)) {
        o.*s.field = false;
        absent.push_back(";" + s.name + "=0;");
        continue;
      }
      std::string v = take(s.name);
      if (v != "0" && v != "1")
        throw bad(s.name + " is not 0 or 1");
      o.*s.field = v == "1";
    }
  std::string policy = take(kInlineSwitch);
  bool known = false;
  for (int i = 0; i < 3; ++i)
    if (policy == kInlineNames[i]) {
      o.inline_packet_bodies = static_cast<Inline>(i);
      known = true;
    }
  if (!known)
    throw bad("inline policy '" + policy + "'");
  o.opt_level = number("opt");
  if (fields.count("stream_kib"))
    o.stream_min_kib = number("stream_kib");
  if (fields.count("prefetch_kib"))
    o.prefetch_min_kib = number("prefetch_kib");
  if (fields.count("triple"))
    o.target_triple = take("triple");
  if (fields.count("cpu"))
    o.target_cpu = take("cpu");
  o.target_features = take("features");
  std::stringstream passes(take("off"));
  while (std::getline(passes, part, ','))
    if (!part.empty())
      o.disabled_passes.push_back(part);
  if (!fields.empty())
    throw bad("unknown field '" + fields.begin()->first + "'");
  std::string expected = o.key();
  for (const std::string &field : absent)
    expected.replace(expected.find(field), field.size(), ";");
  if (expected != canonical)
    throw bad("not in canonical form");
  return o;
}

} // namespace lanejit
