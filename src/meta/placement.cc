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

uint64_t FreeBytes(const NodeRecord& node) {
  uint64_t total = 0;
  for (const VolumeRecord& v : node.volumes) total += v.free_bytes;
  return total;
}

}  // namespace

Result<std::vector<ReplicaTarget>> ChooseTargets(const std::vector<NodeRecord>& nodes,
                                                 const std::vector<bool>& up,
                                                 const PlacementRequest& request) {
  std::vector<size_t> candidates;
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    if (up[idx] && BestVolume(nodes[idx], request.chunk_size) != nullptr) candidates.push_back(idx);
  }
  // The writer's own node first, then by free space.
  std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
    bool wa = nodes[a].node == request.writer, wb = nodes[b].node == request.writer;
    if (wa != wb) return wa;
    return FreeBytes(nodes[a]) > FreeBytes(nodes[b]);
  });
  if (candidates.size() < request.replicas) {
    return Status(StatusCode::kMetaNoVolumes,
                  fmt::format("need {} node(s) with {} bytes free for a new chunk, {} available",
                              request.replicas, request.chunk_size, candidates.size()));
  }
  std::vector<ReplicaTarget> targets;
  for (uint32_t replica = 0; replica < request.replicas; ++replica) {
    const NodeRecord& node = nodes[candidates[replica]];
    targets.push_back(ReplicaTarget{node.node, BestVolume(node, request.chunk_size)->volume});
  }
  return targets;
}

}  // namespace t0fs::meta
