// The machine code a case's report puts side by side must be what the
// objects saved in the bundle hold: each record re-read with lanejit
// inspect and compared field by field.
#include "checks.h"
#include "json_fields.h"

#include <lanejit/inspect.h>

#include <map>

namespace lanejit::audit {
namespace {
using nlohmann::json;

// The record's fields as inspect gives them for `f`, in bundle.json's form.
json expected(const inspect::FunctionReport &f) {
  json calls = json::array(), loops = json::array();
  for (const inspect::CallSite &call : f.calls)
    calls.push_back(call.target);
  for (const inspect::Loop &loop : f.loops)
    if (loop.innermost)
      loops.push_back(loop.instructions);
  return {{"bytes", f.bytes},
          {"instructions", f.instructions},
          {"stack_frame", f.stack_frame},
          {"vector_bits", f.vector_bits},
          {"calls", calls},
          {"innermost_instructions", loops}};
}

} // namespace

void checkMachineCode(const Case &c, const std::filesystem::path &dir, Findings &findings) {
  if (c.machine_code.is_null())
    return;
  if (!c.machine_code.is_array()) {
    findings.fail(kind::kMalformed, c.where, "machine_code is not an array");
    return;
  }
  std::map<std::string, inspect::ObjectReport> read; // by file
  for (size_t i = 0; i < c.machine_code.size(); ++i) {
    const json &r = c.machine_code[i];
    std::string where = c.where + " machine_code " + std::to_string(i);
    if (!r.is_object() || !r.contains("file") || !r["file"].is_string() ||
        !r.contains("function") || !r["function"].is_string()) {
      findings.fail(kind::kMalformed, where, "lacks a file or function");
      continue;
    }
    std::string file = r["file"], function = r["function"];
    if (!isBundlePath(file)) {
      findings.fail(kind::kMalformed, where, "'" + file + "' is not a path inside the bundle");
      continue;
    }
    if (!read.count(file)) {
      std::optional<std::string> bytes = readFileBytes(dir / file);
      if (!bytes) {
        findings.fail(kind::kMissingFile, where, "cannot read " + file);
        continue;
      }
      try {
        read[file] = inspect::inspectObject(*bytes);
      } catch (const std::exception &e) {
        findings.fail(kind::kWrongMachineCode, where, file + " cannot be read: " + e.what());
        continue;
      }
    }
    const inspect::FunctionReport *found = nullptr;
    for (const inspect::FunctionReport &f : read[file].functions)
      if (f.name == function)
        found = &f;
    if (!found) {
      findings.fail(kind::kWrongMachineCode, where, file + " has no function " + function);
      continue;
    }
    json want = expected(*found);
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!r.contains(it.key()) || r[it.key()] != it.value())
        findings.fail(kind::kWrongMachineCode, where,
                      function + " " + it.key() + " is " +
                          (r.contains(it.key()) ? describe(r[it.key()]) : "absent") + ", " +
                          file + " has " + describe(it.value()));
  }
}

} // namespace lanejit::audit
