// `lanejit audit BUNDLE`: re-derives every claim of an evidence bundle and
// prints PASS, or FAIL followed by each failure (docs/audit.md). Exit code
// 0 on PASS, 1 on FAIL.
#include "commands.h"

#include "audit.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

namespace lanejit::cli {

std::function<int()> addAuditCommand(CLI::App &app) {
  auto bundle = std::make_shared<std::string>();
  CLI::App *audit =
      app.add_subcommand("audit", "re-derive a bench bundle's claims: PASS, or each failure");
  audit->add_option("bundle", *bundle, "the bundle directory `lanejit bench` wrote")->required();
  return [bundle] {
    audit::AuditResult result = audit::auditBundle(*bundle);
    std::printf("%s\n", result.pass() ? "PASS" : "FAIL");
    for (const std::string &failure : result.failures)
      std::printf("%s\n", failure.c_str());
    for (const std::string &note : result.notes)
      std::printf("note: %s\n", note.c_str());
    return result.pass() ? 0 : 1;
  };
}

} // namespace lanejit::cli
