// The on-disk object cache: compiled kernels kept across processes, so a
// second process that compiles the same program compiles nothing.
//
// Where: $XDG_CACHE_HOME/lanejit, else $HOME/.cache/lanejit; LANEJIT_CACHE=off
// (or 0/false/no) turns it off. One file per kernel, named by the SHA-256 of
// its key: the program text, the code-changing options, the target CPU and
// features, and lanejit's own identity (version, LLVM version, and the size
// and modification time of the binary lanejit is linked into, so a rebuilt
// lanejit never reads an older build's code). The file holds the full key
// (compared on load, so a hash collision cannot return another kernel) and a
// SHA-256 of its contents: a damaged or truncated file is ignored and
// rewritten. Files are written to a temporary name and renamed into place,
// so concurrent processes only ever see whole files. The folder's size is
// bounded, least recently used files first (cache_bound.h). No error here
// reaches the caller: the cache is an optimisation, the compile goes on
// without it.
#pragma once

#include <optional>
#include <string>

namespace lanejit::persistent {

struct Entry {
  std::string entry_symbol; // the entry's name in `object`
  std::string counts;       // the codegen counts of the report (compile.cpp)
  std::string object;       // the relocatable object the JIT linked
};

// The cache folder, or "" when the cache is off or has no home.
std::string directory();

// The cache folder whether the cache is on or off ("" with no home), for
// `lanejit cache`.
std::string folder();

// lanejit's build identity, part of every key (see above).
const std::string &buildIdentity();

// The entry stored under `key`, or nothing (absent, off, damaged, or
// another key with the same hash).
std::optional<Entry> load(const std::string &key);

// Stores `entry` under `key`, replacing any file there; failures are
// silent.
void store(const std::string &key, const Entry &entry);

} // namespace lanejit::persistent
