// Opens the torch module (torch_module.h) once per process: next to this
// executable first, then at its build path. If it cannot be loaded the
// torch peer is absent, and atenCpuCapability() and stderr say why.
#include "peers/peer_factories.h"
#include "peers/torch_module.h"

#include <cstdio>
#include <dlfcn.h>
#include <mutex>
#include <unistd.h>

namespace lanejit::bench {
namespace {

struct TorchModule {
  decltype(&lanejit_torch_peer_new) make_peer = nullptr;
  decltype(&lanejit_torch_aten_capability) capability = nullptr;
  std::string path, error;
};

std::vector<std::string> candidatePaths() {
  std::vector<std::string> paths;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string exe(self, static_cast<size_t>(n));
    paths.push_back(exe.substr(0, exe.rfind('/') + 1) + "lanejit_peer_torch.so");
  }
#ifdef LANEJIT_TORCH_MODULE_PATH
  paths.push_back(LANEJIT_TORCH_MODULE_PATH);
#endif
  return paths;
}

TorchModule load() {
  TorchModule m;
  for (const std::string &path : candidatePaths()) {
    if (access(path.c_str(), R_OK) != 0)
      continue;
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // never closed
    if (!handle) {
      m.error = dlerror();
      break;
    }
    m.make_peer = reinterpret_cast<decltype(m.make_peer)>(dlsym(handle, "lanejit_torch_peer_new"));
    m.capability =
        reinterpret_cast<decltype(m.capability)>(dlsym(handle, "lanejit_torch_aten_capability"));
    if (m.make_peer && m.capability) {
      m.path = path;
      return m;
    }
    m.error = path + " lacks the torch peer's entry points";
    break;
  }
  if (m.error.empty())
    m.error = "lanejit_peer_torch.so not found next to this executable or at its build path";
  m.make_peer = nullptr;
  m.capability = nullptr;
  std::fprintf(stderr, "lanejit: torch peer unavailable: %s\n", m.error.c_str());
  return m;
}

const TorchModule &module() {
  static std::once_flag once;
  static TorchModule m;
  std::call_once(once, [] { m = load(); });
  return m;
}

} // namespace

std::unique_ptr<Peer> makeTorchPeer() {
  std::unique_ptr<Peer> peer;
  if (module().make_peer)
    module().make_peer(&peer);
  return peer;
}

std::string atenCpuCapability() {
  if (!module().capability)
    return "unavailable (" + module().error + ")";
  std::string line;
  module().capability(&line);
  return line;
}

std::vector<std::string> peerModules() {
  if (module().path.empty())
    return {};
  return {module().path};
}

} // namespace lanejit::bench
