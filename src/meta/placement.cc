#include "meta/placement.h"

#include <algorithm>

#include <fmt/format.h>

namespace t0fs::meta {
namespace {

// The volume of `node` with the most free space, if any has room.
const VolumeRecord* BestVolume(const NodeRecord& node, uint64_t need) {
  const VolumeRecord* best = nullptr;
  for (const VolumeRecord& v : node.volumes) {
    if (v.free_bytes < need) continue;
    if (best == nullptr || v.free_bytes > best->free_bytes) best = &v;
  }
  return best;
}

double Score(const NodeChoice& c) {
  uint64_t free = 0;
  for (const VolumeRecord& v : c.node->volumes) free += v.free_bytes;
  return static_cast<double>(free) / (1.0 + static_cast<double>(c.load));
}

bool Contains(const std::vector<NodeId>& list, NodeId node) {
  return std::find(list.begin(), list.end(), node) != list.end();
}

}  // namespace

Result<std::vector<ReplicaTarget>> ChooseTargets(const std::vector<NodeChoice>& nodes,
                                                 const PlacementRequest& request) {
  const uint64_t need = std::min(request.chunk_size, kPlacementReserve);
  std::vector<const NodeChoice*> candidates;
  size_t down = 0;  // nodes that would be candidates but are down
  size_t lost = 0;  // or down for longer than repair-grace
  for (const NodeChoice& c : nodes) {
    if ((!c.usable && !c.down && !c.lost) || Contains(request.exclude, c.node->node)) continue;
    if (!request.allowed.empty() && !Contains(request.allowed, c.node->node)) continue;
    if (BestVolume(*c.node, need) == nullptr) continue;
    if (c.usable) {
      candidates.push_back(&c);
    } else if (c.down) {
      ++down;
    } else {
      ++lost;
    }
  }
  const bool local = request.placement == Placement::kLocal && request.writer.valid();
  std::stable_sort(
      candidates.begin(), candidates.end(), [&](const NodeChoice* a, const NodeChoice* b) {
        if (a->suspect != b->suspect) return b->suspect;
        if (local) {
          bool wa = a->node->node == request.writer, wb = b->node->node == request.writer;
          if (wa != wb) return wa;
        }
        return Score(*a) > Score(*b);
      });
  size_t want = std::max<uint32_t>(1, request.replicas);
  if (candidates.empty() || (candidates.size() < want && !request.allow_fewer)) {
    if (down > 0) {
      return Status(StatusCode::kMetaNodesDown,
                    fmt::format("need {} node(s) for a chunk, {} up with room, {} down", want,
                                candidates.size(), down));
    }
    if (lost > 0) {  // a dead cluster is not a full one
      return Status(
          StatusCode::kMetaNodesLost,
          fmt::format("need {} node(s) for a chunk, {} up with room, {} without heartbeats for "
                      "longer than repair-grace (lost until they heartbeat again)",
                      want, candidates.size(), lost));
    }
    return Status(StatusCode::kMetaNoVolumes,
                  fmt::format("need {} node(s) with {} bytes free for a chunk, {} usable", want,
                              need, candidates.size()));
  }
  std::vector<ReplicaTarget> targets;
  for (size_t idx = 0; idx < std::min(want, candidates.size()); ++idx) {
    const NodeRecord& node = *candidates[idx]->node;
    const VolumeRecord* volume = BestVolume(node, need);
    if (node.node == request.writer && request.writer_volume.valid()) {
      for (const VolumeRecord& v : node.volumes) {
        if (v.volume == request.writer_volume && v.free_bytes >= need) volume = &v;
      }
    }
    targets.push_back(ReplicaTarget{node.node, volume->volume});
  }
  return targets;
}

VolumeId VolumeFor(const NodeRecord& node, uint64_t chunk_size) {
  const VolumeRecord* best = BestVolume(node, std::min(chunk_size, kPlacementReserve));
  return best != nullptr ? best->volume : VolumeId();
}

}  // namespace t0fs::meta
