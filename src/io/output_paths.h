// io/output_paths.h — checking where a command will write, before it starts.
//
// A command that writes files checks every output path up front, so a
// mistake in the last one does not surface after the work (and after other
// files were written).
#pragma once

#include <string>
#include <vector>

namespace lanejit::io {

// Throws Error(Kind::Io), one line starting with the offending path, unless
// every path in `outputs` can be written: it is not empty, it is a regular
// file if it exists (not a directory or a device), its directory exists and
// is writable, no two outputs are the same file, and no output is the same
// file as one of `inputs`. Paths are compared after resolving "..", "." and
// symbolic links, and existing files also by identity (hard links).
void checkOutputPaths(const std::vector<std::string> &outputs,
                      const std::vector<std::string> &inputs = {});

} // namespace lanejit::io
