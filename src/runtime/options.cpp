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

// LANEJIT_ENABLE_<X> / LANEJIT_DISABLE_<X>; disable wins.
void applySwitch(const std::string &x, bool &field) {
  std::string on = "LANEJIT_ENABLE_" + x, off = "LANEJIT_DISABLE_" + x;
  if (const char *v = env(on); v && truthy(on, v))
    field = true;
  if (const char *v = env(off); v && truthy(off, v))
    field = false;
}

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
  applySwitch("FUSE_POINTWISE", o.fuse_pointwise);
  applySwitch("FUSE_REDUCTIONS", o.fuse_reductions);
  applySwitch("FUSE_OUTPUTS", o.fuse_outputs);
  applySwitch("FULL_PACKET_SPECIALIZATION", o.specialize_full_packets);
  applySwitch("PROVE_IN_PLACE", o.prove_in_place);
  applySwitch("HOIST_GUARDS", o.hoist_guards);
  // Inlining is three-way: enable forces inlining, disable forces helpers,
  // neither leaves the cost rule; disable wins as everywhere.
  {
    bool forced = false, inlined = false;
    if (const char *v = env("LANEJIT_ENABLE_INLINE_PACKET_BODIES");
        v && truthy("LANEJIT_ENABLE_INLINE_PACKET_BODIES", v))
      forced = inlined = true;
    if (const char *v = env("LANEJIT_DISABLE_INLINE_PACKET_BODIES");
        v && truthy("LANEJIT_DISABLE_INLINE_PACKET_BODIES", v))
      forced = true, inlined = false;
    if (forced)
      o.inline_packet_bodies = inlined ? Inline::Always : Inline::Never;
  }
  applySwitch("DUMP_PASSES", o.dump_passes);
  applySwitch("TIME_PASSES", o.time_passes);
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

CompileOptions CompileOptions::fromEnvironment() { return fromEnvironment(CompileOptions()); }

std::string CompileOptions::key() const {
  std::ostringstream k;
  k << "lanes=" << lanes << ";fuse=" << fuse_pointwise << fuse_reductions << fuse_outputs
    << ";spec=" << specialize_full_packets << ";inplace=" << prove_in_place
    << ";hoist=" << hoist_guards << ";inline=" << static_cast<int>(inline_packet_bodies)
    << ";opt=" << opt_level << ";features=" << target_features << ";off=";
  for (const std::string &p : disabled_passes)
    k << p << ",";
  // block_rows and the dump/time switches do not change the code.
  return k.str();
}

} // namespace lanejit
