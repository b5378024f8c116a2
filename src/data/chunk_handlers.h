// The RPC handlers of the data service: chunk I/O over TCP and fd passing on
// the unix socket. Each handler validates its request (lengths against
// max_io, the volume belongs to this node) before touching a file.
#pragma once

#include <utility>
#include <vector>

#include "data/capability_gate.h"
#include "data/chunk_store.h"
#include "data/data_metrics.h"
#include "data/data_config.h"
#include "data/scrubber.h"
#include "rpc/server.h"

namespace t0fs::data {

// Every chunk request must carry a capability granting the rights it needs
// (`gate`); damage a read finds is also reported through `scrubber`. Bytes
// read and written and descriptors handed out are added to `traffic`.
std::vector<std::pair<rpc::Method, rpc::Handler>> MakeChunkHandlers(ChunkStore& store,
                                                                    const DataConfig& config,
                                                                    const CapabilityGate& gate,
                                                                    Scrubber& scrubber,
                                                                    ChunkTraffic traffic = {});

}  // namespace t0fs::data
