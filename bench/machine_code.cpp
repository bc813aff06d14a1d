// A case's machine code, side by side (bench/machine_code.h).
#include "machine_code.h"

#include "io/read_file.h"
#include "io/staged_files.h"

#include <lanejit/error.h>
#include <lanejit/inspect.h>

namespace lanejit::bench {
namespace fs = std::filesystem;
namespace {

void append(std::vector<CodeRecord> &out, const std::string &variant, const std::string &file,
            const inspect::ObjectReport &report) {
  for (const inspect::FunctionReport &f : report.functions) {
    CodeRecord r;
    r.variant = variant;
    r.file = file;
    r.function = f.name;
    r.bytes = static_cast<int64_t>(f.bytes);
    r.instructions = f.instructions;
    r.stack_frame = f.stack_frame;
    r.vector_bits = f.vector_bits;
    for (const inspect::CallSite &call : f.calls)
      r.calls.push_back(call.target);
    for (const inspect::Loop &loop : f.loops)
      if (loop.innermost)
        r.innermost_instructions.push_back(loop.instructions);
    out.push_back(std::move(r));
  }
}

} // namespace

std::vector<CodeRecord> readMachineCode(const std::string &case_id,
                                        const std::vector<BoundVariant> &variants,
                                        const fs::path &bundle_dir) {
  bool named = false;
  for (const BoundVariant &v : variants)
    named = named || !v.objects.empty();
  if (!named || variants.empty() || !variants.front().kernel)
    return {};
  std::vector<CodeRecord> out;
  const BoundVariant &lanejit = variants.front();
  const std::string object = lanejit.kernel->object();
  std::string file = "objects/" + case_id + "/" + lanejit.record.name + ".o";
  fs::create_directories(bundle_dir / "objects" / case_id);
  io::writeFileAtomically((bundle_dir / file).string(), object);
  append(out, lanejit.record.name, file, inspect::inspectObject(object));
  for (const BoundVariant &v : variants)
    for (const PreparedPeer::CodeObject &o : v.objects) {
      std::string bytes = io::readUserFile(o.file.string());
      append(out, v.record.name, fs::relative(o.file, bundle_dir).string(),
             inspect::inspectObject(bytes, o.functions));
    }
  return out;
}

} // namespace lanejit::bench
