// A covering array: few configurations that still exercise every
// interaction of up to `strength` switches.
//
// For factors with levels[i] levels each, returns rows (one level per
// factor) such that any `strength` factors show every combination of their
// levels in at least one row. The exhaustive product grows as 2^k with k
// switches; a strength-3 array over a dozen switches has a few dozen rows.
// Rows in `required` come first, unchanged; the rest are chosen greedily
// with a fixed seed, so the array is the same on every run and machine.
#pragma once

#include <string>
#include <vector>

namespace lanejit::test {

using CoveringRow = std::vector<int>;

std::vector<CoveringRow> coveringArray(const std::vector<int> &levels, int strength,
                                       const std::vector<CoveringRow> &required = {});

// Whether `rows` cover every combination of levels of every `strength`
// factors; on failure names the first combination missed. Written
// independently of the generator, to check it.
bool coversAllInteractions(const std::vector<int> &levels, int strength,
                           const std::vector<CoveringRow> &rows, std::string *missed = nullptr);

} // namespace lanejit::test
