// report.md: the table a person reads must show the summary's numbers.
// The table's shape is specified in docs/bench-bundle.md ("report.md"):
// one row per case; "<variant> µs", "<first>/<other>" ratio, "roofline" and
// "checks" columns; numbers printed with %.4g, absent cells "–".
#include "checks.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

namespace lanejit::audit {
namespace {

const std::string kDash = "\xE2\x80\x93"; // en dash, the table's "absent"

std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

std::vector<std::string> cells(const std::string &line) {
  std::vector<std::string> out;
  std::string body = trim(line);
  if (body.size() < 2 || body.front() != '|' || body.back() != '|')
    return out;
  std::stringstream in(body.substr(1, body.size() - 2));
  std::string cell;
  while (std::getline(in, cell, '|'))
    out.push_back(trim(cell));
  return out;
}

std::optional<double> parseNumber(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size())
    return std::nullopt;
  return value;
}

// The cell shows `value` as %.4g does (compared as numbers, not spellings).
bool shows(const std::string &cell, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  std::optional<double> shown = parseNumber(cell);
  return shown && *shown == std::strtod(buffer, nullptr);
}

struct Table {
  std::vector<std::string> header;
  std::map<std::string, std::vector<std::string>> rows; // by case id
};

// Every table whose first column is `first` ("Case": the main table first,
// then any other, the seed's layout; "Kernel": the machine code), in order,
// rows keyed by their first `key_columns` cells. A table ends at its first
// non-row line.
std::vector<Table> readTables(const std::string &text, const std::string &first,
                              size_t key_columns, Findings &findings) {
  std::vector<Table> tables;
  std::stringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::vector<std::string> row = cells(line);
    if (row.empty()) {
      inside = false;
      continue;
    }
    if (!inside) {
      if (row[0] == first) {
        tables.push_back({row, {}});
        inside = true;
      }
      continue;
    }
    if (row[0].find_first_not_of("-: ") == std::string::npos)
      continue; // the separator line
    Table &table = tables.back();
    std::string key = row[0];
    for (size_t k = 1; k < key_columns && k < row.size(); ++k)
      key += " | " + row[k];
    if (row.size() != table.header.size())
      findings.fail(kind::kWrongReport, "report.md",
                    "row '" + row[0] + "' has " + std::to_string(row.size()) +
                        " cells, the header " + std::to_string(table.header.size()));
    else if (!table.rows.emplace(key, row).second)
      findings.fail(kind::kWrongReport, "report.md", "'" + key + "' has two rows");
  }
  if (tables.empty() && first == "Case")
    findings.fail(kind::kWrongReport, "report.md", "no table with a 'Case' column");
  return tables;
}

int failedVisits(const Case &c) {
  int failed = 0;
  for (const Round &round : c.rounds)
    for (const Visit &visit : round.visits)
      failed += visit.status != "ok" ? 1 : 0;
  return failed;
}

// "1.352 (memory)": the floor's ratio and its bound; a dash without one.
bool showsFloor(const std::string &cell, const Case &c) {
  const nlohmann::json &f = c.floor;
  bool has = f.is_object() && f.value("bound", nlohmann::json()).is_string() &&
             f["bound"] != "none" && f.value("ratio", nlohmann::json()).is_number();
  if (!has)
    return cell == kDash;
  std::string suffix = " (" + f["bound"].get<std::string>() + ")";
  return cell.size() > suffix.size() && cell.ends_with(suffix) &&
         shows(cell.substr(0, cell.size() - suffix.size()), f["ratio"].get<double>());
}

// The floor table's numbers: floor_s in µs and the per-call counts.
bool showsFloorNumber(const std::string &cell, const Case &c, const std::string &head) {
  const nlohmann::json &f = c.floor;
  const nlohmann::json *value = nullptr;
  double scale = 1;
  if (f.is_object() && head == "floor (\xC2\xB5s)" && f.contains("floor_s")) {
    value = &f["floor_s"];
    scale = 1e6;
  } else if (f.is_object() && f.value("compute", nlohmann::json()).is_object()) {
    const char *key = head == "vector per call" ? "vector_per_call" : "instructions_per_call";
    if (f["compute"].contains(key))
      value = &f["compute"][key];
  }
  if (!value || !value->is_number())
    return cell == kDash;
  return shows(cell, value->get<double>() * scale);
}

const Ratio *findRatio(const Case &c, const std::string &num, const std::string &den) {
  for (const Ratio &r : c.ratios)
    if (r.numerator == num && r.denominator == den)
      return &r;
  return nullptr;
}

// "0.5262 [0.5011–0.5523] 2/2" for the ratio's median, min, max, wins, rounds.
bool showsRatio(const std::string &cell, const Ratio &r) {
  static const std::regex pattern("^(\\S+) \\[(\\S+)" + kDash + "(\\S+)\\] (\\d{1,9})/(\\d{1,9})$");
  std::smatch m;
  if (!std::regex_match(cell, m, pattern) || !r.median || !r.min || !r.max || !r.wins || !r.rounds)
    return false;
  return shows(m[1], *r.median) && shows(m[2], *r.min) && shows(m[3], *r.max) &&
         std::stoll(m[4]) == *r.wins && std::stoll(m[5]) == *r.rounds;
}

// Every cell of the case's row shows the summary's value; the main table
// (`complete`) must also have a row for every case and a column for every
// variant and every ratio of the first variant.
void checkRow(const Case &c, const Table &table, bool complete, Findings &findings) {
  auto it = table.rows.find(c.id);
  if (it == table.rows.end()) {
    if (complete)
      findings.fail(kind::kWrongReport, c.where, "report.md has no row for this case");
    return;
  }
  const std::vector<std::string> &row = it->second;
  const std::string suffix = " \xC2\xB5s"; // " µs"
  std::map<std::string, bool> shown_variants, shown_ratios;
  for (size_t col = 1; col < table.header.size(); ++col) {
    const std::string &head = table.header[col], &cell = row[col];
    std::string what;
    bool ok = true;
    if (head.size() > suffix.size() && head.ends_with(suffix)) {
      std::string variant = head.substr(0, head.size() - suffix.size());
      auto time = c.time_s.find(variant);
      shown_variants[variant] = true;
      ok =
          time == c.time_s.end() ? cell == kDash : time->second && shows(cell, *time->second * 1e6);
    } else if (head.find('/') != std::string::npos) {
      const Ratio *r =
          findRatio(c, head.substr(0, head.find('/')), head.substr(head.find('/') + 1));
      if (r)
        shown_ratios[head] = true;
      ok = r ? showsRatio(cell, *r) : cell == kDash;
    } else if (head.ends_with(" compile ms")) {
      auto it = c.compile_ms.find(head.substr(0, head.find(' ')));
      ok = it == c.compile_ms.end() ? cell == kDash : it->second && shows(cell, *it->second);
    } else if (head == "roofline") {
      ok = c.roofline && c.roofline->ratio ? shows(cell, *c.roofline->ratio) : cell == kDash;
    } else if (head == "floor" || head == "time \xC3\xB7 floor") {
      ok = showsFloor(cell, c);
    } else if (head == "floor (\xC2\xB5s)" || head == "vector per call" ||
               head == "instructions per call") {
      ok = showsFloorNumber(cell, c, head);
    } else if (head == "checks") {
      int failed = failedVisits(c);
      ok = cell == (failed ? "FAILED (" + std::to_string(failed) + " visits)" : "ok");
    }
    if (!ok)
      findings.fail(kind::kWrongReport, c.where,
                    "report.md column '" + head + "' shows '" + cell +
                        "', which is not the summary's value");
  }
  if (!complete)
    return;
  for (const Variant &v : c.variants)
    if (!shown_variants.count(v.name))
      findings.fail(kind::kWrongReport, c.where, "report.md has no '" + v.name + " µs' column");
  if (!c.variants.empty())
    for (const Ratio &r : c.ratios)
      if (r.numerator == c.variants[0].name &&
          !shown_ratios.count(r.numerator + "/" + r.denominator))
        findings.fail(kind::kWrongReport, c.where,
                      "report.md has no '" + r.numerator + "/" + r.denominator + "' column");
}

std::string joined(const nlohmann::json &list, const std::string &separator) {
  if (!list.is_array() || list.empty())
    return kDash;
  std::string out;
  for (const nlohmann::json &item : list)
    out += (out.empty() ? "" : separator) + (item.is_string() ? item.get<std::string>() : item.dump());
  return out;
}

// The machine-code table ("Kernel" | function | ...): one row per record of
// every case's machine_code, each cell as the bench prints it, and no other.
void checkMachineCodeTable(const Bundle &bundle, const std::string &text, Findings &findings) {
  std::map<std::string, std::vector<std::string>> want;
  for (const Case &c : bundle.cases) {
    if (!c.machine_code.is_array())
      continue;
    for (const nlohmann::json &r : c.machine_code) {
      if (!r.is_object() || !r.value("variant", nlohmann::json()).is_string() ||
          !r.value("function", nlohmann::json()).is_string())
        continue; // reported by checkMachineCode
      int64_t frame = r.value("stack_frame", int64_t{-1});
      std::vector<std::string> cells = {
          c.id + " " + r["variant"].get<std::string>(), r["function"].get<std::string>(),
          r.value("bytes", nlohmann::json()).dump(), r.value("instructions", nlohmann::json()).dump(),
          frame < 0 ? kDash : std::to_string(frame), r.value("vector_bits", nlohmann::json()).dump(),
          joined(r.value("calls", nlohmann::json()), " "),
          joined(r.value("innermost_instructions", nlohmann::json()), ", ")};
      want[cells[0] + " | " + cells[1]] = cells;
    }
  }
  std::vector<Table> tables = readTables(text, "Kernel", 2, findings);
  if (tables.empty()) {
    if (!want.empty())
      findings.fail(kind::kWrongReport, "report.md", "no machine-code table ('Kernel' column)");
    return;
  }
  for (const Table &table : tables)
    for (const auto &[key, row] : table.rows) {
      auto it = want.find(key);
      if (it == want.end())
        findings.fail(kind::kWrongReport, "report.md",
                      "machine-code row '" + key + "' is no record of the bundle's");
      else if (row != it->second)
        findings.fail(kind::kWrongReport, "report.md",
                      "machine-code row '" + key + "' is not the bundle's record");
    }
  for (const auto &[key, cells] : want)
    if (!tables.front().rows.count(key))
      findings.fail(kind::kWrongReport, "report.md", "no machine-code row for '" + key + "'");
}

} // namespace

void checkReport(const Bundle &bundle, const std::filesystem::path &dir, Findings &findings) {
  std::optional<std::string> text = readFileBytes(dir / "report.md");
  if (!text)
    return; // reported by the files check
  std::vector<Table> tables = readTables(*text, "Case", 1, findings);
  std::map<std::string, bool> known;
  for (const Case &c : bundle.cases) {
    known[c.id] = true;
    for (size_t t = 0; t < tables.size(); ++t)
      checkRow(c, tables[t], t == 0, findings);
  }
  for (const Table &table : tables)
    for (const auto &[id, row] : table.rows)
      if (!known.count(id))
        findings.fail(kind::kWrongReport, "report.md", "row '" + id + "' names no case");
  checkMachineCodeTable(bundle, *text, findings);
}

} // namespace lanejit::audit
