// Fuzz target: the text parser (include/lanejit/text.h, docs/text-format.md).
// Any bytes: parse() either throws Error(Kind::Parse) (and nothing else) or
// returns a program whose printed form is a fixed point: parsing it again
// succeeds, prints back byte for byte and keeps the structural hash.
#include "fuzz_check.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <cstdint>
#include <string>
#include <string_view>

using namespace lanejit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Program program;
  try {
    program = parse(text, "<fuzz>");
  } catch (const Error &e) {
    fuzz::require(e.kind() == Error::Kind::Parse,
                  std::string("parse threw an Error of a kind other than Parse: ") + e.what());
    return 0;
  }
  std::string printed = print(program);
  Program again;
  try {
    again = parse(printed, "<printed>");
  } catch (const Error &e) {
    fuzz::finding(std::string("the printed form does not parse: ") + e.what() + "\n" + printed);
  }
  std::string reprinted = print(again);
  fuzz::require(reprinted == printed,
                "print(parse(print(p))) != print(p):\n" + printed + "--- became ---\n" + reprinted);
  fuzz::require(again.hash() == program.hash(), "parse(print(p)) changed the hash:\n" + printed);
  return 0;
}
