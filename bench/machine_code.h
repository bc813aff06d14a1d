// bench/machine_code.h — a case's machine code, lanejit's beside a peer's:
// the objects saved in the bundle and read with lanejit inspect, so the
// report can explain a ratio from the two hot loops (the seed's method).
#pragma once

#include "records.h"
#include "variants.h"

#include <filesystem>
#include <vector>

namespace lanejit::bench {

// When some peer of `variants` names the code it runs: writes the first
// lanejit variant's kernel object to objects/<case>/lanejit.o and returns
// its functions, then each peer object's named functions (with the parts
// the compiler split off, NAME.cold, NAME._omp_fn.N). Paths in the records
// are relative to `bundle_dir`. Empty when no peer names its code.
std::vector<CodeRecord> readMachineCode(const std::string &case_id,
                                        const std::vector<BoundVariant> &variants,
                                        const std::filesystem::path &bundle_dir);

} // namespace lanejit::bench
