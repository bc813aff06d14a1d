// src/options/switches.def is the one table of passes and switches: CompileOptions'
// switch names, the pipeline's pass list and docs/switches.md must all
// follow it. Before: the table; Expected: every name in each of them.
#include "driver/pipeline.h"

#include <lanejit/error.h>
#include <lanejit/options.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace lanejit {
namespace {

std::string readDocs() {
  std::ifstream in(LANEJIT_SOURCE_DIR "/docs/switches.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string capitals(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string kebab(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

using test::has;

TEST(SwitchTable, EveryLoweringSwitchIsNamedAfterItsPass) {
  std::vector<std::string> names = CompileOptions::switchNames();
  for (const passes::PassInfo &pass : passes::passList()) {
    if (pass.stage != "lower" || pass.option == "inline_packet_bodies")
      continue;
    EXPECT_EQ(kebab(pass.option), pass.name);
    EXPECT_NE(std::find(names.begin(), names.end(), capitals(pass.option)), names.end())
        << pass.option << " is not a switch";
  }
}

TEST(SwitchTable, EverySwitchAndPassIsDocumented) {
  std::string docs = readDocs();
  ASSERT_FALSE(docs.empty()) << "docs/switches.md not found";
  for (const std::string &name : CompileOptions::switchNames()) {
    std::string field = name;
    for (char &c : field)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(has(docs, "`" + name + "`") || has(docs, "LANEJIT_ENABLE_" + name))
        << name << " is not in docs/switches.md";
    EXPECT_TRUE(has(docs, "`" + field + "`")) << field << " is not in docs/switches.md";
  }
  for (const passes::PassInfo &pass : passes::passList())
    EXPECT_TRUE(has(docs, "`" + pass.name + "`")) << pass.name << " is not in docs/switches.md";
}

TEST(SwitchTable, EverySwitchTheDocsNameExists) {
  // The other direction: a switch renamed or removed in the table must not
  // live on in the docs. The old name of SPECIALIZE_FULL_PACKETS is named
  // there on purpose, as still read.
  std::string docs = readDocs();
  std::vector<std::string> names = CompileOptions::switchNames();
  std::set<std::string> known(names.begin(), names.end());
  known.insert("PASS"); // LANEJIT_DISABLE_PASS
  std::regex var("LANEJIT_(ENABLE|DISABLE)_([A-Z0-9_]+)");
  for (std::sregex_iterator it(docs.begin(), docs.end(), var), end; it != end; ++it)
    EXPECT_TRUE(known.count((*it)[2])) << (*it)[0] << " in docs/switches.md is not a switch";
  size_t begin = docs.find("## Optimisations"), stop = docs.find("\n## ", begin + 1);
  ASSERT_NE(begin, std::string::npos) << "no Optimisations section";
  std::string table = docs.substr(begin, stop - begin);
  std::regex row("\\n\\| `([a-z_]+)` \\| `([A-Z_]+)` \\|");
  int rows = 0;
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it, ++rows)
    EXPECT_TRUE(known.count((*it)[2])) << (*it)[2] << " in docs/switches.md is not a switch";
  EXPECT_GT(rows, 0) << "the optimisation table's rows were not found";
}

TEST(SwitchTable, TheOldNameOfASwitchStillReads) {
  CompileOptions o;
  o.setSwitch("FULL_PACKET_SPECIALIZATION", false);
  EXPECT_FALSE(o.specialize_full_packets);
  std::string key = o.key();
  ASSERT_TRUE(has(key, "SPECIALIZE_FULL_PACKETS=0")) << key;
  std::string old =
      std::regex_replace(key, std::regex("SPECIALIZE_FULL_PACKETS"), "FULL_PACKET_SPECIALIZATION");
  EXPECT_EQ(CompileOptions::fromKey(old).key(), key);
  EXPECT_THROW(o.setSwitch("FULL_PACKETS", true), Error);
}

} // namespace
} // namespace lanejit
