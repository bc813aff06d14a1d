// A main() for fuzz targets built without libFuzzer (the normal g++ build):
// feeds every file named on the command line, or found in a named
// directory, to LLVMFuzzerTestOneInput once. ctest runs it on each target's
// checked-in corpus and regressions, so the suite replays them cheaply.
// A finding aborts inside the target, which fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path path = argv[i];
    if (fs::is_directory(path)) {
      for (const fs::directory_entry &entry : fs::directory_iterator(path))
        // Dot files (.gitkeep) keep empty directories in git; not inputs.
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.')
          files.push_back(entry.path());
    } else if (fs::is_regular_file(path)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end()); // a stable order for reproducible logs
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (a replay that checks nothing passes nothing)\n");
    return 2;
  }
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, no findings\n", files.size());
  return 0;
}
