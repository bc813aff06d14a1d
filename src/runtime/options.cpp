// CompileOptions: environment variables and the cache key.
#include <lanejit/error.h>
#include <lanejit/options.h>

#include <cstdlib>
#include <sstream>

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

struct BoolSwitch {
  const char *name; // LANEJIT_ENABLE_<name> / LANEJIT_DISABLE_<name>
  bool CompileOptions::*field;
};
const BoolSwitch kSwitches[] = {
    {"FUSE_POINTWISE", &CompileOptions::fuse_pointwise},
    {"FUSE_REDUCTIONS", &CompileOptions::fuse_reductions},
    {"FUSE_OUTPUTS", &CompileOptions::fuse_outputs},
    {"BOUND_MASKED_COLUMNS", &CompileOptions::bound_masked_columns},
    {"FULL_PACKET_SPECIALIZATION", &CompileOptions::specialize_full_packets},
    {"PROVE_IN_PLACE", &CompileOptions::prove_in_place},
    {"HOIST_GUARDS", &CompileOptions::hoist_guards},
    {"DUMP_PASSES", &CompileOptions::dump_passes},
    {"TIME_PASSES", &CompileOptions::time_passes},
};
constexpr const char *kInlineSwitch = "INLINE_PACKET_BODIES";

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
  for (const BoolSwitch &s : kSwitches)
    names.push_back(s.name);
  names.push_back(kInlineSwitch);
  return names;
}

void CompileOptions::setSwitch(const std::string &name, bool on) {
  for (const BoolSwitch &s : kSwitches)
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

CompileOptions CompileOptions::fromEnvironment() { return fromEnvironment(CompileOptions()); }

std::string CompileOptions::key() const {
  std::ostringstream k;
  k << "lanes=" << lanes << ";fuse=" << fuse_pointwise << fuse_reductions << fuse_outputs
    << ";bound=" << bound_masked_columns
    << ";spec=" << specialize_full_packets << ";inplace=" << prove_in_place
    << ";hoist=" << hoist_guards << ";inline=" << static_cast<int>(inline_packet_bodies)
    << ";opt=" << opt_level << ";features=" << target_features << ";off=";
  for (const std::string &p : disabled_passes)
    k << p << ",";
  // block_rows and the dump/time switches do not change the code.
  return k.str();
}

} // namespace lanejit
