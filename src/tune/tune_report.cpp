// TuneResult::text(): the candidates, their medians and the choice.
#include <lanejit/tune.h>

#include <fmt/format.h>

namespace lanejit {
namespace {

std::string duration(double ns) {
  if (ns >= 1e6)
    return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3)
    return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

} // namespace

std::string TuneResult::text() const {
  std::string out =
      fmt::format("tune {} {}: {} thread{}, budget {:.0f} ms, spent {:.0f} ms\n", program,
                  shape.str(), threads, threads == 1 ? "" : "s", budget_ms, spent_ms);
  const Measured &base = measured.at(0);
  out += fmt::format("  {:<28} {:>12} {:>11} {:>8}\n", "candidate", "median/call", "/ untuned",
                     "samples");
  for (size_t i = 0; i < measured.size(); ++i) {
    const Measured &m = measured[i];
    std::string mark = i == chosen ? "  <- chosen" : "";
    if (m.untuned)
      mark += "  (untuned)";
    if (m.samples == 0) {
      out += fmt::format("  {:<28} {:>12}{}\n", m.candidate.name(), "not measured", mark);
      continue;
    }
    out += fmt::format("  {:<28} {:>12} {:>11.3f} {:>8}{}\n", m.candidate.name(),
                       duration(m.median_ns), base.median_ns > 0 ? m.median_ns / base.median_ns : 0,
                       m.samples, mark);
  }
  out += fmt::format("chose {}", measured.at(chosen).candidate.name());
  out += record_path.empty() ? "\n" : "; recorded in " + record_path + "\n";
  for (const std::string &note : notes)
    out += "note: " + note + "\n";
  return out;
}

} // namespace lanejit
