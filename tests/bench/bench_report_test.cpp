// The report's headline ratios: lanejit against every variant, and each
// lanejit-tN against the peers at the same thread count only.
#include "case_runner.h"
#include "report.h"

#include <gtest/gtest.h>

#include <string>

namespace lanejit::bench {
namespace {

CaseRecord threadedCase() {
  CaseRecord c;
  c.id = "layernorm-64x4097";
  for (const char *name : {"lanejit", "lanejit-t2", "torch", "torch-t2", "onednn-t2"})
    c.variants.push_back({name, std::string(name).starts_with("lanejit") ? "lanejit" : "peer"});
  // Two rounds; times in seconds per variant, in variant order.
  const double times[2][5] = {{4, 2, 8, 5, 3}, {4, 2, 8, 5, 3}};
  for (const auto &row : times) {
    RoundRecord round;
    for (size_t v = 0; v < c.variants.size(); ++v) {
      VisitRecord visit;
      visit.variant = c.variants[v].name;
      visit.timing.value_s = row[v];
      round.order.push_back(visit.variant);
      round.visits.push_back(visit);
    }
    c.rounds.push_back(round);
  }
  summarize(c);
  return c;
}

TEST(BenchReport, ShowsLanejitAgainstAllAndThreadedLanejitAgainstPeersAtEqualThreads) {
  BenchRecord record;
  record.cases.push_back(threadedCase());
  std::string table = reportTable(record);
  for (const char *column : {"lanejit/lanejit-t2", "lanejit/torch", "lanejit/torch-t2",
                             "lanejit/onednn-t2", "lanejit-t2/torch-t2", "lanejit-t2/onednn-t2"})
    EXPECT_NE(table.find(std::string("| ") + column + " |"), std::string::npos) << column;
  // Not a comparison at equal threads: left out of the headline.
  EXPECT_EQ(table.find("lanejit-t2/torch |"), std::string::npos);
  std::string console = consoleTable(record);
  EXPECT_NE(console.find("lanejit-t2/torch-t2   0.4 [0.4–0.4] 2/2"), std::string::npos) << console;
  EXPECT_NE(console.find("/torch-t2"), std::string::npos);
}

} // namespace
} // namespace lanejit::bench
