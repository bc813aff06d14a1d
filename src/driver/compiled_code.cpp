// The driver's compile: verify -> passes -> plan -> backend (LLVM, ORC),
// behind the kernel cache and the persistent object cache.
#include "driver/compiled_code.h"

#include "driver/disk_objects.h"
#include "driver/lowered.h"
#include "driver/report_builder.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <chrono>
#include <cstdio>

namespace lanejit {

size_t CompiledCode::bytes() const {
  // The object and about as much again in JIT pages (at least one page
  // per section kind), and the texts kept for dumps.
  constexpr size_t kJitPages = 3 * 4096;
  return 2 * object.size() + kJitPages + plan.size() + pass_log.size() + entry_symbol.size() +
         sizeof(CompiledCode);
}

namespace driver {
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
  backend::Native native = linkedOrCompiled(
      persistentKey(program, options, l.target),
      [&] {
        return backend::compile(l.plan, l.target, optimizerSettings(options), entryName(program));
      },
      &fromDisk);
  code->entry = native.entry;
  code->code_lifetime = std::move(native.lifetime);
  code->entry_symbol = std::move(native.symbol);
  code->object = std::move(native.object);
  if (std::string why = backend::cannotRunHere(l.target); !why.empty())
    code->cannot_run_here = "kernel '" + program.name + "' was " + why +
                            "; it can be inspected or written with `lanejit aot`, not run here";
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

CodeLookup compiledCode(const Program &program, const CompileOptions &options) {
  // The cache key holds the full program text, so a hash collision can
  // never return another program's code.
  std::string key = print(program) + "\n" + options.key();
  CacheLookup found = cachedOrBuild(key, [&] { return build(program, options); });
  return {std::static_pointer_cast<const CompiledCode>(found.code), found.hit};
}

namespace {

// An entry's symbol: unique in the process, named after the program and
// the entry kind.
std::string entrySymbol(const Program &program, EntryKind kind, int64_t cols) {
  switch (kind) {
  case EntryKind::Generic:
    return entryName(program);
  case EntryKind::Columns:
    return entryName(program) + "_c" + std::to_string(cols);
  case EntryKind::RowsAcrossLanes:
    return entryName(program) + "_rows" + std::to_string(cols);
  }
  return entryName(program);
}

} // namespace

backend::Native compileEntry(const Program &program, const CompileOptions &options,
                             EntryKind kind, int64_t cols) {
  if (kind == EntryKind::Generic) // compiledCode builds it, with the kernel
    throw Error(Error::Kind::Compile, "compileEntry builds only the entries for one C");
  Lowered l = lowerProgram(program, options);
  std::string diskKey = persistentKey(program, options, l.target);
  if (!diskKey.empty())
    diskKey += (kind == EntryKind::RowsAcrossLanes ? "\nrows_across_lanes_columns="
                                                   : "\ncolumns=") +
               std::to_string(cols);
  return linkedOrCompiled(diskKey, [&] {
    std::string symbol = entrySymbol(program, kind, cols);
    jit::OptimizerSettings settings = optimizerSettings(options);
    if (kind == EntryKind::RowsAcrossLanes)
      return backend::compileRowsAcrossLanes(l.plan, l.target, settings, symbol, cols);
    return backend::compile(l.plan, l.target, settings, symbol, cols);
  });
}

backend::NativePart compilePartEntry(const Program &program, const CompileOptions &options) {
  Lowered l = lowerProgram(program, options);
  return backend::compilePart(l.plan, l.target, optimizerSettings(options),
                              entryName(program) + "_part");
}

std::string dumpEntry(const Program &program, const CompileOptions &options,
                      const std::string &stage, EntryKind kind, int64_t cols) {
  Lowered l = lowerProgram(program, options);
  std::string symbol =
      kind == EntryKind::Generic ? "lanejit_" + program.name : entrySymbol(program, kind, cols);
  return backend::dump(l.plan, l.target, optimizerSettings(options), symbol, stage, kind, cols);
}

} // namespace driver
} // namespace lanejit
