// The golden tests of the lowering passes, as data: every file
// tests/lower/cases/<pass>/<case>.plan is one test (Before -> pass -> After,
// tests/lower/plan_steps.h), named after its file: cases/fuse-outputs/
// joins-two-halves-of-one-output.plan is PlanCases/PlanCaseTest.Matches/
// FuseOutputs_JoinsTwoHalvesOfOneOutput. docs/testing.md describes them.
//
// A case file:
//
//   # What the case shows, in a sentence or two (any number of # lines).
//   pass: prove-in-place                 the lowering pass (docs/switches.md)
//   options: --disable FUSE_OUTPUTS      optional: the CLI's compile flags
//                                        (tools/lanejit/compile_flags.cpp's
//                                        parser); LANEJIT_STREAM_MIN_KIB=N
//                                        and LANEJIT_PREFETCH_MIN_KIB=N, which
//                                        have no flag, as their env variable
//   lanes: 8                             optional: W, 16 when not given
//   program: programs/rope.lj            a shared program (cases/programs/),
//   --- program                          or the program text inline, up to
//   program rope { ... }                 the next section
//   --- before                           the plan handed to the pass
//   ; plan: W=16, ...
//   --- after                            the plan after it, or
//   --- after: unchanged                 (no text) the same as before
//   --- what                             the pass's one-line account
//   2 alias guards evaluated once per entry call
//
// Each of before, after and what is optional (a case checks what it has,
// at least one): the plan texts are compared whole, line for line, what as
// its one line. A mismatch prints a line diff (- expected, + actual).
//
// LANEJIT_UPDATE_PLAN_CASES=1 rewrites the expected sections a failing case
// has (only those: a section it lacks stays unchecked) with what the pass
// now gives, each file written whole (io::writeFileAtomically); read the
// change with `git diff tests/lower/cases` before keeping it.
#include "lower/plan_steps.h"

#include "compile_flags.h" // tools/lanejit: the CLI's compile flags and their parser
#include "io/read_file.h"
#include "io/staged_files.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace lanejit {
namespace {

namespace fs = std::filesystem;

struct PlanCase {
  fs::path path;        // the case file
  std::string relative; // its path under cases/, for messages
  std::string name;     // the test's name
};

void PrintTo(const PlanCase &c, std::ostream *os) { *os << c.relative; }

// "fuse-outputs" -> "FuseOutputs".
std::string camel(const std::string &words) {
  std::string out;
  bool start = true;
  for (char c : words) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      start = true;
      continue;
    }
    out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    start = false;
  }
  return out;
}

// Every *.plan file under cases/, sorted; empty when there is no folder (the test
// CasesDirectoryHoldsCases fails then).
std::vector<PlanCase> planCases() {
  std::vector<PlanCase> cases;
  std::error_code error;
  if (!fs::is_directory(test::planCasesDir(), error))
    return cases;
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(test::planCasesDir()))
    if (entry.is_regular_file() && entry.path().extension() == ".plan") {
      fs::path relative = entry.path().lexically_relative(test::planCasesDir());
      std::string name;
      for (const fs::path &part : relative.parent_path())
        name += camel(part.string()) + "_";
      cases.push_back({entry.path(), relative.generic_string(), name + camel(relative.stem())});
    }
  std::sort(cases.begin(), cases.end(),
            [](const PlanCase &a, const PlanCase &b) { return a.relative < b.relative; });
  return cases;
}

// A case file as its lines: the header (comments and `key: value` lines),
// then the sections, each a marker line and the lines up to the next.
struct Section {
  std::string name;       // program, before, after, what
  bool unchanged = false; // "--- after: unchanged"
  std::vector<std::string> lines;
};

struct CaseFile {
  std::vector<std::string> header;
  std::map<std::string, std::string> fields; // pass, options, lanes, program
  std::vector<Section> sections;

  const Section *section(const std::string &name) const {
    for (const Section &s : sections)
      if (s.name == name)
        return &s;
    return nullptr;
  }
};

constexpr const char *kMarker = "--- ";

std::string trim(const std::string &s) {
  size_t begin = s.find_first_not_of(" \t");
  size_t end = s.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

CaseFile parseCase(const std::string &text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  CaseFile file;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &line = lines[i];
    std::string where = "line " + std::to_string(i + 1) + ": ";
    if (line.rfind(kMarker, 0) == 0) {
      Section section;
      std::string marker = trim(line.substr(4));
      if (marker == "after: unchanged") {
        section.name = "after";
        section.unchanged = true;
      } else {
        section.name = marker;
      }
      if (section.name != "program" && section.name != "before" && section.name != "after" &&
          section.name != "what")
        throw std::runtime_error(where + "unknown section '" + marker +
                                 "' (program, before, after, after: unchanged, what)");
      if (file.section(section.name))
        throw std::runtime_error(where + "a second '" + section.name + "' section");
      file.sections.push_back(section);
    } else if (!file.sections.empty()) {
      file.sections.back().lines.push_back(line);
    } else {
      file.header.push_back(line);
      if (trim(line).empty() || line[0] == '#')
        continue;
      size_t colon = line.find(':');
      std::string key = trim(line.substr(0, colon));
      if (colon == std::string::npos ||
          (key != "pass" && key != "options" && key != "lanes" && key != "program"))
        throw std::runtime_error(where + "expected '# comment' or 'pass|options|lanes|program: " +
                                 "value', not '" + line + "'");
      if (!file.fields.emplace(key, trim(line.substr(colon + 1))).second)
        throw std::runtime_error(where + "a second '" + key + ":'");
    }
  }
  if (!file.fields.count("pass"))
    throw std::runtime_error("no 'pass:' line");
  if (file.fields.count("program") == (file.section("program") != nullptr))
    throw std::runtime_error("give the program once: 'program: programs/NAME.lj' or a "
                             "'--- program' section");
  if (!file.section("before") && !file.section("after") && !file.section("what"))
    throw std::runtime_error("no expected section (before, after, what)");
  if (const Section *what = file.section("what"); what && what->lines.size() > 1)
    throw std::runtime_error("'what' is one line, not " + std::to_string(what->lines.size()));
  return file;
}

std::string serialize(const CaseFile &file) {
  std::string out;
  for (const std::string &line : file.header)
    out += line + "\n";
  for (const Section &s : file.sections) {
    out += std::string(kMarker) + (s.unchanged ? "after: unchanged" : s.name) + "\n";
    for (const std::string &line : s.lines)
      out += line + "\n";
  }
  return out;
}

// A plan text's lines each end with a newline; `what` is one line.
std::string sectionText(const Section &s) {
  std::string text;
  for (const std::string &line : s.lines)
    text += line + "\n";
  if (s.name == "what" && !text.empty())
    text.pop_back();
  return text;
}

std::vector<std::string> sectionLines(std::string text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// A line diff of two texts (longest common subsequence): "  " for a line
// both have, "- " for expected only, "+ " for actual only.
std::string lineDiff(const std::string &expected, const std::string &actual) {
  std::vector<std::string> a = sectionLines(expected), b = sectionLines(actual);
  std::vector<std::vector<int>> common(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;)
    for (size_t j = b.size(); j-- > 0;)
      common[i][j] =
          a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size())
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += "  " + a[i++] + "\n";
      ++j;
    } else if (i < a.size() && (j == b.size() || common[i + 1][j] >= common[i][j + 1])) {
      out += "- " + a[i++] + "\n";
    } else {
      out += "+ " + b[j++] + "\n";
    }
  return out;
}

// `options:` as compile flags over the defaults; the two thresholds with no
// flag as their environment variables (docs/switches.md).
CompileOptions caseOptions(const std::string &text) {
  CompileOptions options;
  std::stringstream in(text);
  std::string flags;
  for (std::string word; in >> word;) {
    size_t eq = word.find('=');
    std::string name = word.substr(0, eq);
    if (word.rfind("LANEJIT_", 0) != 0 || eq == std::string::npos) {
      flags += (flags.empty() ? "" : " ") + word;
      continue;
    }
    int *field = name == "LANEJIT_STREAM_MIN_KIB"     ? &options.stream_min_kib
                 : name == "LANEJIT_PREFETCH_MIN_KIB" ? &options.prefetch_min_kib
                                                      : nullptr;
    if (!field)
      throw std::runtime_error("options: '" + word + "': only LANEJIT_STREAM_MIN_KIB and " +
                               "LANEJIT_PREFETCH_MIN_KIB are given as variables; use the flags");
    *field = std::stoi(word.substr(eq + 1));
  }
  options = cli::applySwitches(options, flags);
  if (options.lanes != 0)
    throw std::runtime_error("options: give W as 'lanes: N', not --lanes");
  return options;
}

class PlanCaseTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanCaseTest, Matches) {
  const PlanCase &c = GetParam();
  std::string text = io::readUserFile(c.path.string());
  CaseFile file;
  test::PlanStep step;
  try {
    file = parseCase(text);
    auto field = [&](const std::string &key) {
      return file.fields.count(key) ? file.fields[key] : std::string();
    };
    CompileOptions options = caseOptions(field("options"));
    int lanes = field("lanes").empty() ? 16 : std::stoi(field("lanes"));
    fs::path shared = test::planCasesDir() / field("program");
    std::string program = field("program").empty() ? sectionText(*file.section("program"))
                                                   : io::readUserFile(shared.string());
    step = test::lowerOnePass(program, field("pass"), options, lanes);
  } catch (const std::exception &e) {
    FAIL() << c.relative << ": " << e.what();
  }

  bool update = [] {
    const char *v = std::getenv("LANEJIT_UPDATE_PLAN_CASES");
    return v && std::string(v) == "1";
  }();
  bool changed = false;
  for (Section &s : file.sections) {
    if (s.name == "program")
      continue;
    std::string actual = s.name == "before"  ? step.before
                         : s.name == "after" ? step.after
                                             : step.what;
    std::string expected = s.unchanged ? step.before : sectionText(s);
    if (actual == expected)
      continue;
    if (update) {
      s.unchanged = false;
      s.lines = sectionLines(actual);
      changed = true;
      continue;
    }
    ADD_FAILURE() << c.relative << ": '" << s.name << "' differs"
                  << (s.unchanged ? " from 'before' (the case says unchanged)" : "")
                  << " (- expected, + actual):\n"
                  << lineDiff(expected, actual)
                  << "LANEJIT_UPDATE_PLAN_CASES=1 rewrites the case with the actual text.";
  }
  if (changed) {
    io::writeFileAtomically(c.path.string(), serialize(file));
    std::cout << "updated " << c.path.string() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(PlanCases, PlanCaseTest, ::testing::ValuesIn(planCases()),
                         [](const ::testing::TestParamInfo<PlanCase> &info) {
                           return info.param.name;
                         });

// No folder, or one without cases, is a failure, not zero tests that pass.
TEST(PlanCases, CasesDirectoryHoldsCases) {
  ASSERT_TRUE(fs::is_directory(test::planCasesDir())) << test::planCasesDir() << " is missing";
  EXPECT_FALSE(planCases().empty()) << "no *.plan files under " << test::planCasesDir();
}

// The file format reads back what it writes, and the diff marks each side.
TEST(PlanCases, FormatRoundTripsAndDiffs) {
  std::string text = "# A comment.\npass: fuse-outputs\nprogram: programs/rope.lj\n"
                     "--- before\n; plan: a\n;   b\n--- after: unchanged\n--- what\nall\n";
  CaseFile file = parseCase(text);
  EXPECT_EQ(serialize(file), text);
  EXPECT_EQ(sectionText(*file.section("before")), "; plan: a\n;   b\n");
  EXPECT_EQ(sectionText(*file.section("what")), "all");
  EXPECT_TRUE(file.section("after")->unchanged);
  EXPECT_EQ(lineDiff("a\nb\nc\n", "a\nx\nc\n"), "  a\n- b\n+ x\n  c\n");
  EXPECT_THROW(parseCase("pass: p\n--- before\nx\n"), std::runtime_error); // no program
  EXPECT_THROW(parseCase("pass: p\nprogram: q\n"), std::runtime_error);    // nothing expected
  EXPECT_THROW(parseCase("pass: p\nprogram: q\n--- plan\n"), std::runtime_error);
  EXPECT_EQ(caseOptions("--disable FUSE_OUTPUTS LANEJIT_STREAM_MIN_KIB=8").stream_min_kib, 8);
  EXPECT_FALSE(caseOptions("--disable FUSE_OUTPUTS").fuse_outputs);
  EXPECT_THROW(caseOptions("--enable NO_SUCH_SWITCH"), Error);
  EXPECT_THROW(caseOptions("--lanes 8"), std::runtime_error);
}

} // namespace
} // namespace lanejit
