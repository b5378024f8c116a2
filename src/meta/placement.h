// Placement: where the replicas of a new chunk go.
//
// Issue-2 scope: one replica. With a writer node that has a volume with room,
// the chunk lands there (data is written where it is produced: the Tier 0
// rule); otherwise on the up node with the most free space. Within a node the
// volume with the most free space wins.
#pragma once

#include <vector>

#include "common/clock.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta {

struct PlacementRequest {
  NodeId writer;          // 0 = the writer is not a data node
  uint32_t replicas = 1;
  uint64_t chunk_size = 0;  // a volume needs at least this much free space
};

// `up` filters out nodes that are down. Fails with kMetaNoVolumes when no
// node can take the chunk.
Result<std::vector<ReplicaTarget>> ChooseTargets(const std::vector<NodeRecord>& nodes,
                                                 const std::vector<bool>& up,
                                                 const PlacementRequest& request);

}  // namespace t0fs::meta
