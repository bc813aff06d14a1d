// io/staged_directory.h — a directory of files that appears whole or not at
// all (the bench's evidence bundle).
//
// Files are written into a hidden sibling, ".NAME.partial-XXXXXX", which
// commit() renames to NAME once everything is in it. A failure (an
// exception, a disk error) before that removes the sibling, so NAME never
// holds half a bundle.
#pragma once

#include <filesystem>

namespace lanejit::io {

class StagedDirectory {
public:
  // Checks that `path` is absent or an empty directory, creates its parent
  // directories, and the sibling to write into. Throws Error(Kind::Io), one
  // line starting with `path`.
  explicit StagedDirectory(std::filesystem::path path);
  // Removes the sibling and everything in it unless commit() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &operator=(const StagedDirectory &) = delete;

  // Where the files go until commit().
  const std::filesystem::path &staging() const { return staging_; }
  // Where they end up.
  const std::filesystem::path &path() const { return path_; }

  // Renames the staging directory to path() (replacing it if it is an empty
  // directory). Throws Error naming path() if it cannot.
  void commit();

private:
  std::filesystem::path path_, staging_;
  bool committed_ = false;
};

} // namespace lanejit::io
