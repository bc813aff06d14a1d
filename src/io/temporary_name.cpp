#include "io/temporary_name.h"

#include <random>

namespace lanejit::io {

std::filesystem::path temporaryNameBeside(const std::filesystem::path &target,
                                          const std::string &tag) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::minstd_rand random(std::random_device{}());
  std::string name = "." + target.filename().string().substr(0, 200) + "." + tag + "-";
  for (int i = 0; i < 6; ++i)
    name.push_back(kChars[random() % (sizeof kChars - 1)]);
  return target.parent_path() / name;
}

} // namespace lanejit::io
