// aot::linkShared: the AOT object through the system linker, loaded back.
#include <lanejit/aot.h>

#include <lanejit/error.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <dlfcn.h>
#include <sys/wait.h>

namespace lanejit::aot {

NativeEntry linkShared(const Artifacts &a, const std::string &directory) {
  namespace fs = std::filesystem;
  fs::create_directories(directory);
  fs::path object = fs::path(directory) / (a.entry_symbol + ".o");
  fs::path library = fs::path(directory) / (a.entry_symbol + ".so");
  fs::path log = fs::path(directory) / (a.entry_symbol + ".log");
  {
    std::ofstream out(object, std::ios::binary | std::ios::trunc);
    out.write(a.object.data(), static_cast<std::streamsize>(a.object.size()));
    if (!out)
      throw Error(Error::Kind::Io, "cannot write " + object.string());
  }
  std::string command = "cc -shared -o '" + library.string() + "' '" + object.string() + "' >'" +
                        log.string() + "' 2>&1";
  int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    throw Error(Error::Kind::Io, "linking " + object.string() + " failed: " + text.str());
  }
  // RTLD_LOCAL: every kernel's symbols stay private to its own library.
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error(Error::Kind::Io, std::string("loading ") + library.string() + ": " + dlerror());
  void *entry = dlsym(handle, a.entry_symbol.c_str());
  if (!entry)
    throw Error(Error::Kind::Io, "no symbol " + a.entry_symbol + " in " + library.string());
  return reinterpret_cast<NativeEntry>(entry);
}

} // namespace lanejit::aot
