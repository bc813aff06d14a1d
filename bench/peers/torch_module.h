// bench/peers/torch_module.h — the torch peer lives in a module
// (lanejit_peer_torch.so, from torch_peer.cpp) that torch_loader.cpp opens
// with dlopen on first use: linking libtorch into every binary would cost
// each process about a second of load time, also the CLI's and the tests'.
#pragma once

#include "peers/peer.h"

extern "C" {
// Writes a new torch peer into *out.
void lanejit_torch_peer_new(std::unique_ptr<lanejit::bench::Peer> *out);
// Writes the atenCpuCapability() line (see peer.h) into *out.
void lanejit_torch_aten_capability(std::string *out);
}
