// Program-level well-formedness. Node typing is checked when nodes are made;
// this pass checks what needs the whole program: declarations, loads
// against their inputs, and writes against their outputs (in range,
// disjoint, covering every column), all as facts proved for every C.
#include <lanejit/error.h>
#include <lanejit/verify.h>

#include <unordered_map>

namespace lanejit {
namespace {

bool isIdentifier(const std::string &s) {
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (s.empty() || !alpha(s[0]))
    return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9'))
      return false;
  return true;
}

// Negative for every C >= 0: a*C + b < 0 whenever a <= 0 and b < 0.
bool provablyNegative(const Dim &d) {
  return d.coeff() <= 0 && d.offset() < 0;
}

std::string range(const Dim &begin, const Dim &end) {
  return "[" + begin.str() + ", " + end.str() + ")";
}

class Verifier {
public:
  explicit Verifier(const Program &p) : p_(p) {}

  std::vector<std::string> run() {
    checkDeclarations();
    int number = 0;
    forEachNode(p_, [&](const Expr &e) { checkNode(*e, number++); });
    checkWrites();
    return std::move(problems_);
  }

private:
  void report(std::string problem) { problems_.push_back(std::move(problem)); }

  void checkDecl(const std::string &what, const std::string &name, DType type, const Dim *cols) {
    std::string who = what + " '" + name + "'";
    if (name.empty())
      report(what + ": name is empty");
    else if (!isIdentifier(name))
      report(who + ": name is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    auto [it, fresh] = names_.emplace(name, who);
    if (!fresh && !name.empty())
      report(who + ": name already used by " + it->second);
    if (type != DType::F32 && !isStorageOnly(type))
      report(who + ": type " + std::string(lanejit::name(type)) +
             " is not supported (buffers are f32, bf16, f16 or i8)");
    if (cols && provablyNegative(*cols))
      report(who + ": column count " + cols->str() + " is negative for every C");
  }

  void checkDeclarations() {
    for (const Param &in : p_.inputs)
      checkDecl("input", in.name, in.type, in.kind == ParamKind::Scalar ? nullptr : &in.cols);
    for (const Output &out : p_.outputs)
      checkDecl("output", out.name, out.type, &out.cols);
    if (p_.outputs.empty())
      report("program has no outputs");
  }

  void checkNode(const Node &n, int number) {
    std::string at = "%" + std::to_string(number);
    for (size_t i = 0; i < n.args.size(); ++i)
      if (!n.args[i])
        report(at + ": operand " + std::to_string(i) + " is missing");
    if (isStorageOnly(n.type))
      report(at + ": a value of type " + std::string(name(n.type)) +
             " (a storage type: loads widen it to f32)");
    if (n.kind == NodeKind::Load)
      checkLoad(n, at);
  }

  void checkLoad(const Node &n, const std::string &at) {
    if (n.param < 0 || n.param >= static_cast<int>(p_.inputs.size())) {
      report(at + ": load refers to input #" + std::to_string(n.param) + ", but the program has " +
             std::to_string(p_.inputs.size()) + " inputs");
      return;
    }
    const Param &decl = p_.inputs[n.param];
    std::string who = at + ": load of input '" + decl.name + "'";
    if (n.type != valueTypeOf(decl.type))
      report(who + " has type " + std::string(name(n.type)) + ", but the input is " +
             std::string(name(decl.type)) +
             (isStorageOnly(decl.type) ? " (it loads as f32)" : ""));
    if (decl.kind == ParamKind::Scalar) {
      if (n.len)
        report(who + " has a column range, but the input is a scalar");
      return;
    }
    if (!n.len) {
      report(who + " has no column range, but the input is a " + std::string(name(decl.kind)));
      return;
    }
    Dim end = n.begin + *n.len;
    if (!provablyLessEqual(Dim(0), n.begin))
      report(who + " columns " + range(n.begin, end) + ": begin may be negative");
    if (!provablyLessEqual(end, decl.cols))
      report(who + " columns " + range(n.begin, end) + " may exceed its " + decl.cols.str() +
             " columns");
  }

  // Per-write checks; returns whether the write is usable for the
  // disjointness and coverage analysis of its output.
  bool checkWrite(const Write &w, size_t index) {
    std::string who = "write #" + std::to_string(index);
    if (w.output < 0 || w.output >= static_cast<int>(p_.outputs.size())) {
      report(who + ": output index " + std::to_string(w.output) + " is out of range (" +
             std::to_string(p_.outputs.size()) + " outputs)");
      return false;
    }
    const Output &out = p_.outputs[w.output];
    who += " to output '" + out.name + "'";
    Dim end = w.begin + w.len;
    bool ok = true;
    if (!w.value) {
      report(who + ": value is missing");
    } else {
      if (w.value->type != valueTypeOf(out.type))
        report(who + ": value type " + std::string(name(w.value->type)) +
               " does not match the output's " + std::string(name(out.type)));
      if (w.value->len && *w.value->len != w.len)
        report(who + ": value has " + w.value->len->str() + " columns, but the write covers " +
               w.len.str());
    }
    if (!provablyLessEqual(Dim(0), w.begin)) {
      report(who + ": columns " + range(w.begin, end) + ": begin may be negative");
      ok = false;
    }
    if (!provablyLessEqual(end, out.cols)) {
      report(who + ": columns " + range(w.begin, end) + " may exceed the output's " +
             out.cols.str() + " columns");
      ok = false;
    }
    return ok;
  }

  static constexpr size_t kMaxWritesPerOutput = 1024;

  void checkWrites() {
    std::vector<std::vector<size_t>> byOutput(p_.outputs.size());
    for (size_t i = 0; i < p_.writes.size(); ++i)
      if (checkWrite(p_.writes[i], i))
        byOutput[p_.writes[i].output].push_back(i);
    for (size_t o = 0; o < p_.outputs.size(); ++o) {
      // The disjointness proof compares every pair of writes; a bound keeps
      // it fast on any input (real programs write a handful of ranges).
      if (byOutput[o].size() > kMaxWritesPerOutput) {
        report("output '" + p_.outputs[o].name + "': " + std::to_string(byOutput[o].size()) +
               " writes; at most " + std::to_string(kMaxWritesPerOutput) + " are supported");
        continue;
      }
      // Coverage of overlapping writes says nothing useful; report the overlap.
      if (checkDisjoint(p_.outputs[o], byOutput[o]))
        checkCoverage(p_.outputs[o], byOutput[o]);
    }
  }

  bool checkDisjoint(const Output &out, const std::vector<size_t> &writes) {
    bool disjoint = true;
    for (size_t i = 0; i < writes.size(); ++i) {
      for (size_t j = i + 1; j < writes.size(); ++j) {
        const Write &a = p_.writes[writes[i]], &b = p_.writes[writes[j]];
        if (a.len == Dim(0) || b.len == Dim(0))
          continue; // an empty write overlaps nothing
        Dim endA = a.begin + a.len, endB = b.begin + b.len;
        if (provablyLessEqual(endA, b.begin) || provablyLessEqual(endB, a.begin))
          continue;
        report("output '" + out.name + "': writes #" + std::to_string(writes[i]) + " " +
               range(a.begin, endA) + " and #" + std::to_string(writes[j]) + " " +
               range(b.begin, endB) + " may overlap");
        disjoint = false;
      }
    }
    return disjoint;
  }

  // Follows the chain 0 = begin_0, end_0 = begin_1, ... up to cols using
  // exact Dim equalities; a step that cannot be taken is a gap. Every write
  // left here is provably inside the output, so the cursor never passes cols.
  void checkCoverage(const Output &out, std::vector<size_t> pending) {
    std::string who = "output '" + out.name + "'";
    Dim cursor = 0;
    while (cursor != out.cols) {
      auto next = pending.end();
      for (auto it = pending.begin(); it != pending.end(); ++it) {
        const Write &w = p_.writes[*it];
        if (w.begin == cursor && (next == pending.end() || p_.writes[*next].len == Dim(0)))
          next = it;
      }
      if (next != pending.end()) {
        cursor = p_.writes[*next].begin + p_.writes[*next].len;
        pending.erase(next);
        continue;
      }
      // A gap; it ends where the provably nearest later write begins.
      std::vector<Dim> later;
      for (size_t i : pending)
        if (provablyLessEqual(cursor, p_.writes[i].begin))
          later.push_back(p_.writes[i].begin);
      if (later.empty()) {
        report(who + ": columns " + range(cursor, out.cols) + " are never written");
        return;
      }
      const Dim *nearest = firstOf(later);
      if (!nearest) {
        report(who + ": columns from " + cursor.str() + " on are not provably written");
        return;
      }
      report(who + ": columns " + range(cursor, *nearest) + " are never written");
      cursor = *nearest;
    }
  }

  // The Dim provably <= all others, if there is one.
  static const Dim *firstOf(const std::vector<Dim> &dims) {
    for (const Dim &d : dims) {
      bool first = true;
      for (const Dim &other : dims)
        first = first && provablyLessEqual(d, other);
      if (first)
        return &d;
    }
    return nullptr;
  }

  const Program &p_;
  std::vector<std::string> problems_;
  std::unordered_map<std::string, std::string> names_;
};

} // namespace

std::vector<std::string> verify(const Program &program) {
  return Verifier(program).run();
}

void verifyOrThrow(const Program &program) {
  std::vector<std::string> problems = verify(program);
  if (problems.empty())
    return;
  std::string message;
  for (const std::string &p : problems)
    message += (message.empty() ? "" : "\n") + p;
  throw Error(Error::Kind::Verify, message);
}

} // namespace lanejit
