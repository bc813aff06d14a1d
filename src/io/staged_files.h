// io/staged_files.h — writing a user's files whole or not at all.
//
// Each file is first written to a temporary file in its own directory
// (".NAME.tmp-XXXXXX"), flushed to disk with fsync, and only then renamed
// over its path, so a reader sees the old file or the new one, never part of
// one. Several files are staged together and renamed only once every one was
// written, so a failure part-way leaves every path as it was. Errors are
// lanejit::Error(Kind::Io), one line, starting with the path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lanejit::io {

class StagedFiles {
public:
  StagedFiles() = default;
  // Removes every temporary file not yet renamed.
  ~StagedFiles();
  StagedFiles(const StagedFiles &) = delete;
  StagedFiles &operator=(const StagedFiles &) = delete;

  // Writes `bytes` to a temporary file beside `path` (beside the file a
  // symbolic link points to, so the link is kept) and fsyncs it. An
  // existing file's permission bits are kept; a new file gets 0666 & ~umask.
  void add(const std::string &path, std::string_view bytes);

  // Renames every staged file over its path, in the order added.
  void commit();

private:
  struct Staged {
    std::string path;      // as the caller named it, for messages
    std::string target;    // the file the rename replaces
    std::string temporary; // the staged bytes
  };
  std::vector<Staged> staged_;
};

// One file, whole or not at all.
void writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace lanejit::io
