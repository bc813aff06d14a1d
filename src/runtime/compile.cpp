// compile(): verify -> passes -> plan -> backend (LLVM, ORC), behind the
// kernel cache and the persistent object cache.
#include "runtime/kernel_impl.h"

#include "runtime/kernel_cache.h"
#include "runtime/lowered.h"
#include "launch/row_launch.h"
#include "cache/persistent_cache.h"
#include "runtime/report_builder.h"

#include "backend/backend.h"
#include "jit/optimizer.h"
#include "lower/choose_mapping.h"
#include "lower/plan.h"

#include <lanejit/error.h>
#include <lanejit/text.h>
#include <lanejit/tune.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

namespace lanejit {
namespace {

// Every Dim of the user's program, with the node or write that uses it, as
// numbered in the printed program. The lowered program's Dims are sums of
// these, so when these are non-negative integers for C, so are they.
std::vector<std::pair<Dim, std::string>> dimsUsed(const Program &program) {
  std::vector<std::pair<Dim, std::string>> dims;
  auto add = [&](const Dim &d, const std::string &what) {
    for (const auto &known : dims)
      if (known.first == d)
        return;
    dims.emplace_back(d, what);
  };
  int number = 0;
  forEachNode(program, [&](const Expr &e) {
    std::string what = "node %" + std::to_string(number++);
    if (e->kind == NodeKind::Load || e->kind == NodeKind::ColIndex || e->kind == NodeKind::Slice ||
        e->kind == NodeKind::DimValue)
      add(e->begin, what);
    if (e->len)
      add(*e->len, what);
  });
  return dims; // writes' ranges are checked by bindShape
}

// `dump --stage=passes`: the input, then the IR after each pass that
// changed it, then every pass's time.
std::string passLog(const Program &program, const std::vector<passes::PassRecord> &records) {
  std::string log = "; --- input ---\n" + print(program);
  std::string times;
  for (const passes::PassRecord &r : records) {
    if (r.changed)
      log += std::string("; --- ") + (r.stage == "ir" ? "IR" : "plan") + " after " + r.name +
             " ---\n" + r.after;
    char line[160];
    std::snprintf(line, sizeof line, "; pass %-24s %s %.3f ms\n", r.name.c_str(),
                  r.ran ? (r.changed ? "changed" : "no-op  ") : "off    ", r.ms);
    times += line;
  }
  return log + times;
}

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

// The persistent cache's key: everything that decides the object's bytes
// (persistent_cache.h), or "" to bypass the cache (timing LLVM's passes
// needs LLVM to run).
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

// Links the persistent cache's object for `key` into `code`; false when
// there is none or it cannot be used (then the caller compiles, and its
// store replaces the entry).
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

// The persistent cache's object for `key` when it has a usable one, else
// `compileIt()`'s, which is then stored under `key` (empty: cache off).
template <typename Compile>
backend::Native linkedOrCompiled(const std::string &key, bool *fromDisk, Compile compileIt) {
  std::optional<backend::Native> native = linkFromDisk(key);
  if (fromDisk)
    *fromDisk = native.has_value();
  if (!native) {
    native = compileIt();
    if (!key.empty())
      persistent::store(key, {native->symbol, countsText(native->counts), native->object});
  }
  return std::move(*native);
}

std::shared_ptr<const CompiledCode> build(const Program &program, const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  Lowered l = lowerProgram(program, options);
  auto code = std::make_shared<CompiledCode>();
  code->lowered = l.plan.program;
  code->plan = lower::describePlan(l.plan);
  code->dims = dimsUsed(program);
  code->workspace = l.plan.workspaceSlots();
  code->row_cost = lower::rowCostOf(l.plan);
  lower::MappingRule mapping = lower::chooseMapping(l.plan, options.rows_across_lanes);
  bool fromDisk = false;
  backend::Native native =
      linkedOrCompiled(persistentKey(program, options, l.target), &fromDisk, [&] {
        return backend::compile(l.plan, l.target, optimizerSettings(options), entryName(program));
      });
  code->entry = native.entry;
  code->code_lifetime = std::move(native.lifetime);
  code->entry_symbol = std::move(native.symbol);
  code->object = std::move(native.object);
  if (std::vector<std::string> missing = backend::featuresMissingOnHost(l.target);
      !missing.empty()) {
    code->cannot_run_here = "kernel '" + program.name + "' was compiled for " +
                            l.target.codegen.cpu + " with CPU features this machine lacks (";
    for (size_t i = 0; i < missing.size(); ++i)
      code->cannot_run_here += (i ? ", " : "") + missing[i];
    code->cannot_run_here += "); it can be inspected or written with `lanejit aot`, not run here";
  }
  code->pass_log = passLog(program, l.passes);
  CompileReport &r = code->report = buildReport(l.plan, l.passes, native.counts);
  // Code compiled for features this machine lacks runs nowhere here.
  code->rows_max_cols = code->cannot_run_here.empty() ? mapping.max_cols : 0;
  code->rows_min_rows = mapping.min_rows;
  r.mapping.rows_across_lanes_max_cols = mapping.max_cols;
  r.mapping.rows_across_lanes_reason = mapping.reason;
  code->rows_size_max_cols = code->cannot_run_here.empty() ? mapping.max_cols_by_size : 0;
  for (int64_t c = 1; mapping.max_cols_by_size > 0 && c <= lower::kMaxRowsAcrossLanesColumns;
       c *= 2) {
    lower::MappingCosts e = lower::estimateMappingCosts(l.plan, c);
    r.mapping.costs.push_back({c, e.packet_local, e.rows_across_lanes});
  }
  r.cpu = l.target.codegen.cpu;
  r.features = l.target.codegen.features;
  r.disk_cache_hit = fromDisk;
  r.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return code;
}

} // namespace

lower::NativePartEntry Kernel::Impl::partEntry() const {
  const Kernel::Impl &k = *this;
  const CompiledCode &code = *k.code;
  if (!k.options.column_split || !code.cannot_run_here.empty())
    return nullptr;
  std::call_once(code.part_once, [&] {
    try {
      // Lowered again, as Kernel::dump does: the same plan as the entry's.
      Lowered l = lowerProgram(k.program, k.options);
      backend::NativePart part = backend::compilePart(
          l.plan, l.target, optimizerSettings(k.options), entryName(k.program) + "_part");
      code.part_lifetime = std::move(part.lifetime);
      code.part.store(part.part, std::memory_order_release);
    } catch (const Error &) {
      // No column split for this kernel: its calls split rows only.
    }
  });
  return code.part.load(std::memory_order_acquire);
}

namespace {

std::atomic<bool> g_forceRowsAcrossLanes{false};

// The packet-local entry specialised for `cols` (runtime/column_entries.h),
// or the generic one.
NativeEntry entryForColumns(const Kernel::Impl &impl, int64_t cols, bool now, bool *settled) {
  const CompiledCode &code = *impl.code;
  if (!impl.options.specialize_columns || impl.generic_entry || !code.cannot_run_here.empty())
    return code.entry;
  auto found = code.by_columns.find(cols, now, [&](int64_t c, std::shared_ptr<void> &lifetime) {
    // Lowered again, as for the column-split entry: the entry's own plan.
    Lowered l = lowerProgram(impl.program, impl.options);
    std::string diskKey = persistentKey(impl.program, impl.options, l.target);
    if (!diskKey.empty())
      diskKey += "\ncolumns=" + std::to_string(c);
    backend::Native native = linkedOrCompiled(diskKey, nullptr, [&] {
      return backend::compile(l.plan, l.target, optimizerSettings(impl.options),
                              entryName(impl.program) + "_c" + std::to_string(c), c);
    });
    lifetime = std::move(native.lifetime);
    return native.entry;
  });
  if (settled)
    *settled = found.settled;
  return found.entry ? found.entry : code.entry;
}

// The rows-across-lanes entry for `cols`, or null when the kernel's rule
// (or the tests' hook) does not pick it for rows x cols or it cannot be
// built (that C then runs packet-local).
NativeEntry rowsAcrossLanesEntry(const Kernel::Impl &k, int64_t rows, int64_t cols) {
  const CompiledCode &code = *k.code;
  int64_t limit = rows >= code.rows_min_rows ? code.rows_max_cols : 0;
  if (g_forceRowsAcrossLanes.load(std::memory_order_relaxed) && k.options.rows_across_lanes &&
      code.cannot_run_here.empty())
    limit = lower::kMaxRowsAcrossLanesColumns;
  // A pinned configuration (the tuner's) overrides the rule both ways.
  if (k.mapping == MappingChoice::PacketLocal)
    limit = 0;
  if (k.mapping == MappingChoice::RowsAcrossLanes && k.options.rows_across_lanes)
    limit = code.rows_size_max_cols;
  if (cols < 1 || cols > limit)
    return nullptr;
  // Compiled at the first call: the rule picks it only where it wins by
  // 2-8x per row (docs/architecture.md, "Rows across lanes").
  return code.rows_across_lanes
      .find(cols, /*now=*/true,
            [&](int64_t c, std::shared_ptr<void> &lifetime) {
              // Lowered again, as partEntry does: the same plan as the entry's.
              Lowered l = lowerProgram(k.program, k.options);
              std::string diskKey = persistentKey(k.program, k.options, l.target);
              if (!diskKey.empty())
                diskKey += "\nrows_across_lanes_columns=" + std::to_string(c);
              backend::Native native = linkedOrCompiled(diskKey, nullptr, [&] {
                return backend::compileRowsAcrossLanes(
                    l.plan, l.target, optimizerSettings(k.options),
                    entryName(k.program) + "_rows" + std::to_string(c), c);
              });
              lifetime = std::move(native.lifetime);
              return native.entry;
            })
      .entry;
}

} // namespace

void forceRowsAcrossLanes(bool on) {
  g_forceRowsAcrossLanes.store(on, std::memory_order_relaxed);
  launch::g_launchSettingsEpoch.fetch_add(1, std::memory_order_relaxed);
}
bool rowsAcrossLanesForced() {
  return g_forceRowsAcrossLanes.load(std::memory_order_relaxed);
}

namespace {

// The settled entry this thread found last: a repeated call of the same
// kernel (by serial number, never reused in a process) and class of shape
// then costs one compare instead of the tuned, rows-across-lanes and C
// look-ups (runEntry at 17x65 was 5-16% behind the bare entry). The class
// is what the look-ups read of a shape: C, and whether R reaches the rows-
// across-lanes rule's minimum (or the tests' hook forces that mapping).
struct LastEntry {
  uint64_t kernel = 0; // 0: nothing kept
  int64_t cols = 0;
  bool narrow = false, forced = false;
  NativeEntry entry = nullptr;
};
thread_local LastEntry t_lastEntry;

} // namespace

NativeEntry entryFor(const Kernel::Impl &impl, int64_t rows, int64_t cols, bool now,
                     bool *settled) {
  bool narrow = rows >= impl.code->rows_min_rows;
  bool forced = rowsAcrossLanesForced();
  LastEntry &last = t_lastEntry;
  if (last.kernel == impl.serial && last.cols == cols && last.narrow == narrow &&
      last.forced == forced) {
    if (settled)
      *settled = true;
    return last.entry;
  }
  bool tunedSettled = true, columnsSettled = true;
  NativeEntry e = tunedEntry(impl, rows, cols, now, &tunedSettled);
  if (!e)
    e = rowsAcrossLanesEntry(impl, rows, cols);
  if (!e)
    e = entryForColumns(impl, cols, now, &columnsSettled);
  // Unsettled: a later call may read a tune record or find the C's entry.
  bool done = tunedSettled && columnsSettled;
  if (done)
    last = {impl.serial, cols, narrow, forced, e};
  if (settled)
    *settled = done;
  return e;
}

std::shared_ptr<Kernel::Impl> compileImpl(const Program &program, const CompileOptions &options) {
  if (options.threads)
    launch::checkThreadCount(*options.threads, "CompileOptions::threads", Error::Kind::Compile);
  // The cache key holds the full program text, so a hash collision can
  // never return another program's code.
  std::string key = print(program) + "\n" + options.key();
  CacheLookup found = cachedOrBuild(key, [&] { return build(program, options); });
  auto impl = std::make_shared<Kernel::Impl>();
  impl->program = program;
  impl->options = options;
  impl->code = found.code;
  impl->report = found.code->report;
  impl->report.mapping.block_rows = options.block_rows; // not part of the cache key
  if (found.hit) {
    impl->report.cache_hit = true;
    impl->report.compile_ms = 0;
  }
  return impl;
}

Kernel compile(const Program &program, const CompileOptions &options) {
  return Kernel(compileImpl(program, options));
}

CompileReport::MappingCost estimateMappingCost(const Kernel &kernel, int64_t cols) {
  Lowered l = lowerProgram(kernel.program(), kernel.options());
  lower::MappingCosts e = lower::estimateMappingCosts(l.plan, cols);
  return {cols, e.packet_local, e.rows_across_lanes};
}

const CompileReport &Kernel::report() const {
  return impl_->report;
}
const std::string &Kernel::object() const {
  return impl_->code->object;
}
const std::string &Kernel::entrySymbol() const {
  return impl_->code->entry_symbol;
}

std::string Kernel::dump(const std::string &stage) const {
  if (stage == "ir")
    return print(impl_->code->lowered);
  if (stage == "plan")
    return impl_->code->plan;
  if (stage == "passes")
    return impl_->code->pass_log;
  if (stage != "llvm" && stage != "llvm-unoptimized" && stage != "asm")
    throw Error(Error::Kind::Compile, "unknown dump stage '" + stage +
                                          "' (passes, ir, plan, llvm-unoptimized, llvm, asm)");
  // Lowered again: the JIT keeps no module after linking.
  Lowered l = lowerProgram(impl_->program, impl_->options);
  return backend::dump(l.plan, l.target, optimizerSettings(impl_->options),
                       "lanejit_" + impl_->program.name, stage);
}

namespace {

// The checks of a dump of one C's entry: `what` names the entry kind in
// the messages, `maxCols` the largest C such an entry exists for.
void checkEntryDump(const std::string &stage, int64_t cols, const std::string &what,
                    const std::string &colsRule, int64_t maxCols) {
  if (stage != "llvm" && stage != "llvm-unoptimized" && stage != "asm")
    throw Error(Error::Kind::Compile, what + " has only the code stages " +
                                          "(llvm-unoptimized, llvm, asm), not '" + stage + "'");
  if (cols < 1 || cols > maxCols)
    throw Error(Error::Kind::Compile, colsRule + " 1 to " + std::to_string(maxCols) +
                                          " columns, not " + std::to_string(cols));
}

} // namespace

std::string Kernel::dump(const std::string &stage, int64_t cols) const {
  checkEntryDump(stage, cols, "a dump for one C", "entries are specialised for",
                 runtime::kMaxSpecializedColumns);
  Lowered l = lowerProgram(impl_->program, impl_->options);
  return backend::dump(l.plan, l.target, optimizerSettings(impl_->options),
                       entryName(impl_->program) + "_c" + std::to_string(cols), stage, cols);
}

std::string Kernel::dumpRowsAcrossLanes(const std::string &stage, int64_t cols) const {
  checkEntryDump(stage, cols, "a rows-across-lanes dump", "rows across lanes takes",
                 lower::kMaxRowsAcrossLanesColumns);
  Lowered l = lowerProgram(impl_->program, impl_->options);
  return backend::dump(l.plan, l.target, optimizerSettings(impl_->options),
                       entryName(impl_->program) + "_rows" + std::to_string(cols), stage, cols,
                       /*rowsAcrossLanes=*/true);
}

} // namespace lanejit
