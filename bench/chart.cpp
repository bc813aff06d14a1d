// The ratio chart (bench/report.h): hand-written SVG, one line per ratio of
// the report's table, grouped by case, on a log2 axis around 1.
#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace lanejit::bench {
namespace {

constexpr double kLabelWidth = 330, kPlotWidth = 520, kRowHeight = 16, kTop = 70;
const char *const kColors[] = {"#1b6ac9", "#d1495b", "#2a9d8f", "#e09f3e",
                               "#6a4c93", "#8d6e63", "#546e7a"};

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

struct Line {
  std::string label, denominator;
  RatioSummary summary;
  bool case_start;
};

} // namespace

std::string chartSvg(const BenchRecord &record) {
  std::vector<Line> lines;
  std::vector<std::string> denominators;
  for (const CaseRecord &c : record.cases) {
    bool first = true;
    for (const RatioRecord &r : c.ratios) {
      if (c.variants.empty() || r.numerator != c.variants.front().name)
        continue;
      lines.push_back({fmt::format("{}  {}/{}", c.id, r.numerator, r.denominator), r.denominator,
                       r.summary, first});
      first = false;
      if (std::find(denominators.begin(), denominators.end(), r.denominator) == denominators.end())
        denominators.push_back(r.denominator);
    }
  }
  // The axis spans every range, whole powers of two, and always includes 1.
  double lo = 0, hi = 0;
  for (const Line &l : lines) {
    lo = std::min(lo, std::floor(std::log2(l.summary.min)));
    hi = std::max(hi, std::ceil(std::log2(l.summary.max)));
  }
  if (hi - lo < 1)
    hi = lo + 1;
  auto x = [&](double ratio) {
    return kLabelWidth + (std::log2(ratio) - lo) / (hi - lo) * kPlotWidth;
  };
  double height = kTop + kRowHeight * (lines.size() + 1) + 40;
  double width = kLabelWidth + kPlotWidth + 110;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  svg += fmt::format("<text x=\"10\" y=\"20\" font-size=\"14\">lanejit bench ({} protocol): "
                     "time ratio per case (log scale; &lt; 1: the first variant is faster)"
                     "</text>\n",
                     escape(record.protocol.name));
  svg += "<text x=\"10\" y=\"38\">dot: median of the per-round ratios; bar: their [min–max] "
         "over rounds (not a confidence interval)</text>\n";
  double bottom = kTop + kRowHeight * lines.size();
  for (double p = lo; p <= hi; ++p) {
    double px = x(std::exp2(p));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"{3}\" stroke-width=\"{4}\"/>\n",
                       px, kTop - 8, bottom, p == 0 ? "#333" : "#ddd", p == 0 ? 1.5 : 1);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>\n", px,
                       bottom + 14, std::exp2(p));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line &l = lines[i];
    double y = kTop + kRowHeight * i + kRowHeight / 2;
    size_t color =
        std::find(denominators.begin(), denominators.end(), l.denominator) - denominators.begin();
    const char *stroke = kColors[color % std::size(kColors)];
    if (l.case_start && i > 0)
      svg += fmt::format("<line x1=\"10\" y1=\"{0:.1f}\" x2=\"{1:.0f}\" y2=\"{0:.1f}\" "
                         "stroke=\"#eee\"/>\n",
                         y - kRowHeight / 2, width - 10);
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\">{}</text>\n", y + 4, escape(l.label));
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                       "stroke=\"{}\" stroke-width=\"3\"/>\n",
                       x(l.summary.min), y, x(l.summary.max), y, stroke);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n",
                       x(l.summary.median), y, stroke);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\">{:.3g} ({}/{})</text>\n",
                       x(l.summary.max) + 6, y + 4, l.summary.median, l.summary.wins,
                       l.summary.rounds);
  }
  svg += "</svg>\n";
  return svg;
}

} // namespace lanejit::bench
