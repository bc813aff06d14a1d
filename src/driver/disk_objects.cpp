// The persistent cache's side of a compile (driver/disk_objects.h).
#include "driver/disk_objects.h"

#include "cache/persistent_cache.h"
#include "jit/optimizer.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <optional>
#include <sstream>

namespace lanejit::driver {
namespace {

// The codegen counts as text, for the persistent cache (the report needs
// them; a cached kernel is not emitted again).
constexpr int codegen::CodegenCounts::*kCountFields[] = {
    &codegen::CodegenCounts::dense_bodies,
    &codegen::CodegenCounts::masked_bodies,
    &codegen::CodegenCounts::helper_functions,
    &codegen::CodegenCounts::helper_calls,
    &codegen::CodegenCounts::loads,
    &codegen::CodegenCounts::stores,
    &codegen::CodegenCounts::masked_loads,
    &codegen::CodegenCounts::masked_stores,
    &codegen::CodegenCounts::workspace_loads,
    &codegen::CodegenCounts::workspace_stores,
    &codegen::CodegenCounts::math_expansions,
    &codegen::CodegenCounts::guards,
    &codegen::CodegenCounts::guards_hoisted,
};

std::string countsText(const codegen::CodegenCounts &counts) {
  std::string text;
  for (auto field : kCountFields)
    text += std::to_string(counts.*field) + " ";
  return text;
}

bool countsFromText(const std::string &text, codegen::CodegenCounts &counts) {
  std::istringstream in(text);
  for (auto field : kCountFields)
    if (!(in >> counts.*field))
      return false;
  return true;
}

// The persistent cache's object for `key`, linked; nothing when there is
// none or it cannot be used (then the caller compiles, and its store
// replaces the entry).
std::optional<backend::Native> linkFromDisk(const std::string &key) {
  if (key.empty())
    return std::nullopt;
  std::optional<persistent::Entry> entry = persistent::load(key);
  codegen::CodegenCounts counts;
  if (!entry || !countsFromText(entry->counts, counts))
    return std::nullopt;
  try {
    return backend::link(entry->object, entry->entry_symbol, counts);
  } catch (const Error &) {
    return std::nullopt;
  }
}

} // namespace

std::string persistentKey(const Program &program, const CompileOptions &options,
                          const backend::Target &target) {
  if (options.time_passes)
    return {};
  std::string key = persistent::buildIdentity() + "\n" + print(program) + "\n" + options.key() +
                    "\ncpu=" + target.codegen.cpu + "\nfeatures=" + target.codegen.features;
  // The experiments' pipeline replaces the lean one (jit/optimizer.h): its
  // objects must not be read back as the lean pipeline's, nor the reverse.
  if (std::string passes = jit::leanPipelineOverride();
      options.lean_llvm_pipeline && !passes.empty())
    key += "\nllvm-passes=" + passes;
  return key;
}

backend::Native linkedOrCompiled(const std::string &key,
                                 const std::function<backend::Native()> &compile, bool *fromDisk) {
  std::optional<backend::Native> native = linkFromDisk(key);
  if (fromDisk)
    *fromDisk = native.has_value();
  if (!native) {
    native = compile();
    if (!key.empty())
      persistent::store(key, {native->symbol, countsText(native->counts), native->object});
  }
  return std::move(*native);
}

} // namespace lanejit::driver
