// io/read_file.h — a whole file's bytes, through POSIX calls.
//
// The persistent cache reads a kernel's object this way on every load: a
// process's first std::ifstream cost a cached load ~0.1 ms of iostream
// and locale set-up. The other readers share it.
#pragma once

#include <optional>
#include <string>

namespace lanejit::io {

// The bytes of the regular file at `path`; nullopt when it cannot be
// opened or read (missing, a directory, no permission, an I/O error), with
// errno saying why.
std::optional<std::string> readFile(const std::string &path);

// The same, for a file the user named: throws Error(Kind::Io) "cannot read
// '<path>': <reason>" (no such file, a directory, ...) instead.
std::string readUserFile(const std::string &path);

} // namespace lanejit::io
