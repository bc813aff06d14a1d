// io/temporary_name.h — names for files and directories staged beside the
// path they will replace.
#pragma once

#include <filesystem>
#include <string>

namespace lanejit::io {

// ".NAME.<tag>-XXXXXX" in `target`'s directory, XXXXXX six random
// characters: hidden, and recognizable as a leftover of a killed process.
// NAME is cut to 200 characters so the result stays under NAME_MAX. The
// caller creates it exclusively (O_EXCL, mkdir) and tries another on EEXIST.
std::filesystem::path temporaryNameBeside(const std::filesystem::path &target,
                                          const std::string &tag);

// How many names a caller tries before giving up.
constexpr int kTemporaryNameAttempts = 100;

} // namespace lanejit::io
