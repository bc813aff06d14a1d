// toText / toJson / diff: the forms of an ObjectReport.
#include <lanejit/inspect.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace lanejit::inspect {
namespace {

std::string opsText(const MemoryOps &m) {
  return fmt::format("{} vector, {} masked, {} broadcast, {} gather, {} scalar, {} stack, "
                     "{} constant",
                     m.vector, m.masked, m.broadcast, m.gather, m.scalar, m.stack, m.constant);
}

std::string mixText(const InstructionMix &m) {
  return fmt::format("{} vector, {} scalar fp, {} fma, {} branch of {}", m.vector, m.scalar_fp,
                     m.fma, m.branch, m.total);
}

std::string mixJson(const InstructionMix &m) {
  return fmt::format(R"({{"vector": {}, "scalar_fp": {}, "fma": {}, "branch": {}, "total": {}}})",
                     m.vector, m.scalar_fp, m.fma, m.branch, m.total);
}

std::string mcaText(const Loop &l) {
  return l.mca_cycles > 0 ? fmt::format("; llvm-mca {:.2f} cycles/iteration", l.mca_cycles) : "";
}

std::string callsText(const FunctionReport &f) {
  if (f.calls.empty())
    return "none";
  std::string text = std::to_string(f.calls.size()) + ":";
  for (const CallSite &c : f.calls)
    text += fmt::format(" {}@{:#x}{}", c.target, c.offset, c.internal ? " (in this object)" : "");
  return text;
}

std::string frameText(const FunctionReport &f) {
  if (f.stack_frame < 0)
    return "unknown";
  std::string text = fmt::format("{} bytes ({})", f.stack_frame, f.stack_source);
  if (f.stack_alignment > 0)
    text += fmt::format(", realigned to {} bytes (padding not counted)", f.stack_alignment);
  if (f.red_zone > 0)
    text += fmt::format(" + {} bytes of red zone below rsp", f.red_zone);
  return text;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

std::string opsJson(const MemoryOps &m) {
  return fmt::format(R"({{"vector": {}, "masked": {}, "broadcast": {}, "gather": {}, )"
                     R"("scalar": {}, "stack": {}, "constant": {}}})",
                     m.vector, m.masked, m.broadcast, m.gather, m.scalar, m.stack, m.constant);
}

// "lanejit_rope_3" and "lanejit_rope_0" are the same kernel compiled twice;
// helpers carry the entry's name, so every "_<digits>" run between
// separators is dropped ("lanejit_rope_0.dense" -> "lanejit_rope.dense").
std::string baseName(const std::string &name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    size_t j = i + 1;
    while (name[i] == '_' && j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])))
      ++j;
    bool counter = name[i] == '_' && j > i + 1 &&
                   (j == name.size() || !std::isalnum(static_cast<unsigned char>(name[j])));
    if (!counter)
      out.append(name, i, j - i);
    i = j;
  }
  return out;
}

void diffField(std::string &out, const char *field, const std::string &a, const std::string &b) {
  if (a != b)
    out += fmt::format("    {}: {} -> {}\n", field, a, b);
}

std::string innermostText(const FunctionReport &f) {
  std::string text;
  for (const Loop &l : f.loops)
    if (l.innermost)
      text += fmt::format("{}[{} instr; loads {}; stores {}; mix {}{}]", text.empty() ? "" : " ",
                          l.instructions, opsText(l.loads), opsText(l.stores), mixText(l.mix),
                          mcaText(l));
  return text.empty() ? "none" : text;
}

} // namespace

std::string toText(const ObjectReport &r) {
  // A relocatable object is what inspect reads by default: only the other
  // kinds are named.
  std::string out = fmt::format("object: {} ({}){}\n", r.format, r.triple,
                                r.kind.empty() || r.kind == "relocatable" ? "" : ", " + r.kind);
  out += "imports: " +
         (r.undefined.empty() ? std::string("none")
                              : fmt::format("{}", fmt::join(r.undefined, ", "))) +
         "\n";
  if (!r.mca_cpu.empty())
    out += fmt::format("llvm-mca: cpu {}, cycles per iteration of each innermost loop{}\n",
                       r.mca_cpu, r.mca_note.empty() ? "" : " (" + r.mca_note + ")");
  else if (!r.mca_note.empty())
    out += "llvm-mca: no estimates: " + r.mca_note + "\n";
  for (const FunctionReport &f : r.functions) {
    out += fmt::format("\nfunction {}\n", f.name);
    out += fmt::format("  code:        {} bytes, {} instructions, at {:#x}; widest vector "
                       "memory operand {} bits\n",
                       f.bytes, f.instructions, f.address, f.vector_bits);
    out += fmt::format("  stack frame: {}\n", frameText(f));
    out += fmt::format("  calls:       {}\n", callsText(f));
    out += fmt::format("  loads:       {}\n", opsText(f.loads));
    out += fmt::format("  stores:      {}\n", opsText(f.stores));
    out += fmt::format("  mix:         {}\n", mixText(f.mix));
    out += fmt::format(
        "  loops:       {} ({} innermost: {} dense, {} masked, {} scalar)\n", f.loops.size(),
        std::count_if(f.loops.begin(), f.loops.end(), [](const Loop &l) { return l.innermost; }),
        f.dense_loops, f.masked_loops, f.scalar_loops);
    for (const Loop &l : f.loops)
      out += fmt::format("    [{:#x}, {:#x}){} {} instr; loads: {}; stores: {}; mix: {}{}\n",
                         l.begin, l.end, l.innermost ? " innermost," : "", l.instructions,
                         opsText(l.loads), opsText(l.stores), mixText(l.mix), mcaText(l));
    out += fmt::format("  full-packet body: {}\n", f.full_packet_body);
    out += fmt::format("  tail body:        {}\n", f.tail_body);
  }
  return out;
}

std::string toJson(const ObjectReport &r) {
  std::string out = fmt::format(
      "{{\n  \"format\": {},\n  \"kind\": {},\n  \"triple\": {},\n  \"arch\": {},\n"
      "  \"mca_cpu\": {},\n  \"mca_note\": {},\n  \"undefined\": [",
      jsonString(r.format), jsonString(r.kind), jsonString(r.triple), jsonString(r.arch),
      jsonString(r.mca_cpu), jsonString(r.mca_note));
  for (size_t i = 0; i < r.undefined.size(); ++i)
    out += (i ? ", " : "") + jsonString(r.undefined[i]);
  out += "],\n  \"functions\": [";
  for (size_t i = 0; i < r.functions.size(); ++i) {
    const FunctionReport &f = r.functions[i];
    out += i ? ",\n    {" : "\n    {";
    out += fmt::format(
        "\"name\": {}, \"address\": {}, \"bytes\": {}, \"instructions\": {}, "
        "\"stack_frame\": {}, \"stack_source\": {}, \"stack_alignment\": {}, \"red_zone\": {}, "
        "\"vector_bits\": {},\n     \"calls\": [",
        jsonString(f.name), f.address, f.bytes, f.instructions, f.stack_frame,
        jsonString(f.stack_source), f.stack_alignment, f.red_zone, f.vector_bits);
    for (size_t c = 0; c < f.calls.size(); ++c)
      out += fmt::format("{}{{\"offset\": {}, \"target\": {}, \"internal\": {}}}", c ? ", " : "",
                         f.calls[c].offset, jsonString(f.calls[c].target), f.calls[c].internal);
    out += fmt::format("],\n     \"loads\": {}, \"stores\": {}, \"mix\": {},\n     "
                       "\"loops\": [",
                       opsJson(f.loads), opsJson(f.stores), mixJson(f.mix));
    for (size_t l = 0; l < f.loops.size(); ++l) {
      const Loop &loop = f.loops[l];
      out += fmt::format("{}{{\"begin\": {}, \"end\": {}, \"innermost\": {}, \"instructions\": {}, "
                         "\"loads\": {}, \"stores\": {}, \"mix\": {}, \"mca_cycles\": {}}}",
                         l ? ",\n       " : "\n       ", loop.begin, loop.end, loop.innermost,
                         loop.instructions, opsJson(loop.loads), opsJson(loop.stores),
                         mixJson(loop.mix), loop.mca_cycles);
    }
    out += fmt::format("],\n     \"dense_loops\": {}, \"masked_loops\": {}, "
                       "\"scalar_loops\": {}, \"masked_outside_loops\": {},\n     "
                       "\"full_packet_body\": {}, \"tail_body\": {}}}",
                       f.dense_loops, f.masked_loops, f.scalar_loops, f.masked_outside_loops,
                       jsonString(f.full_packet_body), jsonString(f.tail_body));
  }
  return out + "\n  ]\n}\n";
}

std::string diff(const ObjectReport &a, const ObjectReport &b, const std::string &labelA,
                 const std::string &labelB) {
  std::string out;
  if (a.undefined != b.undefined)
    out += fmt::format("imports: {} -> {}\n", fmt::join(a.undefined, ", "),
                       fmt::join(b.undefined, ", "));
  // Same name first, then same name without counters; each function once.
  std::vector<const FunctionReport *> used;
  auto find = [&used](const ObjectReport &r, const std::string &name) -> const FunctionReport * {
    auto unused = [&](const FunctionReport &f) {
      return std::find(used.begin(), used.end(), &f) == used.end();
    };
    for (const FunctionReport &f : r.functions)
      if (f.name == name && unused(f))
        return used.push_back(&f), &f;
    for (const FunctionReport &f : r.functions)
      if (baseName(f.name) == baseName(name) && unused(f))
        return used.push_back(&f), &f;
    return nullptr;
  };
  for (const FunctionReport &fa : a.functions) {
    const FunctionReport *fb = find(b, fa.name);
    if (!fb) {
      out += fmt::format("function {}: only in {}\n", fa.name, labelA);
      continue;
    }
    std::string fields;
    diffField(fields, "bytes", std::to_string(fa.bytes), std::to_string(fb->bytes));
    diffField(fields, "instructions", std::to_string(fa.instructions),
              std::to_string(fb->instructions));
    diffField(fields, "vector bits", std::to_string(fa.vector_bits),
              std::to_string(fb->vector_bits));
    diffField(fields, "stack frame", frameText(fa), frameText(*fb));
    diffField(fields, "calls", callsText(fa), callsText(*fb));
    diffField(fields, "loads", opsText(fa.loads), opsText(fb->loads));
    diffField(fields, "stores", opsText(fa.stores), opsText(fb->stores));
    diffField(fields, "mix", mixText(fa.mix), mixText(fb->mix));
    diffField(fields, "loops", std::to_string(fa.loops.size()), std::to_string(fb->loops.size()));
    diffField(fields, "dense loops", std::to_string(fa.dense_loops),
              std::to_string(fb->dense_loops));
    diffField(fields, "masked loops", std::to_string(fa.masked_loops),
              std::to_string(fb->masked_loops));
    diffField(fields, "scalar loops", std::to_string(fa.scalar_loops),
              std::to_string(fb->scalar_loops));
    diffField(fields, "innermost loops", innermostText(fa), innermostText(*fb));
    diffField(fields, "full-packet body", fa.full_packet_body, fb->full_packet_body);
    diffField(fields, "tail body", fa.tail_body, fb->tail_body);
    if (!fields.empty())
      out += fmt::format("function {}:\n{}",
                         fa.name == fb->name ? fa.name : fa.name + " / " + fb->name, fields);
  }
  for (const FunctionReport &fb : b.functions)
    if (std::find(used.begin(), used.end(), &fb) == used.end())
      out += fmt::format("function {}: only in {}\n", fb.name, labelB);
  std::string header = fmt::format("--- {}\n+++ {}\n", labelA, labelB);
  return header + (out.empty() ? "no differences\n" : out);
}

} // namespace lanejit::inspect
