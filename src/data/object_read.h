// The ObjectRead handler of the data service: a client none of whose
// replicas of a chunk answers (its node lost, before repair recalls it)
// reads the chunk's copy in the object tier through this node, with ranged
// GETs (protect=object). The node derives the object's key from the chunk
// and version the capability covers; the client names no key.
#pragma once

#include <utility>

#include "data/capability_gate.h"
#include "data/copier.h"
#include "data/data_metrics.h"
#include "rpc/server.h"

namespace t0fs::data {

// Requests need a read capability on the chunk and at most `max_io` bytes;
// the bytes sent are counted in `traffic` as chunk reads.
std::pair<rpc::Method, rpc::Handler> MakeObjectReadHandler(Copier& copier,
                                                           const CapabilityGate& gate,
                                                           uint64_t max_io,
                                                           ChunkTraffic traffic = {});

}  // namespace t0fs::data
