// Placement: where the replicas of a new chunk (or a repair copy) go.
//
// Rules: never two replicas of a chunk on one node; only usable nodes (up or
// suspect, not draining) with a volume that has room for a chunk; only the
// objective's allowed nodes when it names some. With placement=local the
// writer's own node comes first (data is written where it is produced: the
// Tier 0 rule); the rest are ranked by free space discounted by load
// (copies and allocations in flight). Suspect nodes come after all the
// others, the writer's own included.
#pragma once

#include <vector>

#include "meta/store/meta_store.h"

namespace t0fs::meta {

// Chunk files are sparse and grow as written: a volume needs room for a
// whole chunk only up to this much (a 64 GiB Tier 0 chunk must not need
// 64 GiB free to be placed).
inline constexpr uint64_t kPlacementReserve = uint64_t{1} << 30;

struct PlacementRequest {
  NodeId writer;          // 0 = the writer is not a data node
  VolumeId writer_volume; // the writer's volume to use on its node if it has room (prepared files); 0 = any
  uint32_t replicas = 1;
  Placement placement = Placement::kLocal;
  std::vector<NodeId> allowed;  // empty = any node
  uint64_t chunk_size = 0;      // a volume needs this much free space (at most kPlacementReserve)
  std::vector<NodeId> exclude;  // nodes that already hold a replica
  bool allow_fewer = false;     // return what is possible (at least one) rather than fail
};

struct NodeChoice {
  const NodeRecord* node = nullptr;
  bool usable = false;  // up or suspect, and not draining
  uint64_t load = 0;    // work in flight towards the node
  // Usable but missing heartbeats: taken only when the nodes that heartbeat
  // cannot hold every replica (a chunk placed on a node that is in fact
  // gone makes its writer wait for it).
  bool suspect = false;
  // Not usable because it is down (not draining): a chunk that only such
  // nodes could take waits for one to come back (kMetaNodesDown).
  bool down = false;
  // Down for longer than repair-grace: not waited for; a chunk that only
  // such nodes could take fails with kMetaNodesLost (EIO), not ENOSPC.
  bool lost = false;
};

// kMetaNoVolumes when not even one (or, without allow_fewer, not enough)
// nodes can take the chunk; kMetaNodesDown when nodes that are down (not
// draining, with room, not yet lost) would have made up the shortfall: a
// node that restarts, so the writer waits for it rather than fail with
// ENOSPC.
Result<std::vector<ReplicaTarget>> ChooseTargets(const std::vector<NodeChoice>& nodes,
                                                 const PlacementRequest& request);

// The volume of `node` a chunk of up to `chunk_size` bytes goes to when
// placed there (the one with most free space); invalid if none has room.
VolumeId VolumeFor(const NodeRecord& node, uint64_t chunk_size);

}  // namespace t0fs::meta
