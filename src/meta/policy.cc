#include "meta/policy.h"

#include <fmt/format.h>

namespace t0fs::meta {

uint64_t NewFileChunkSize(const InodeAttr& dir, const MetaConfig& config) {
  if (dir.chunk_size != 0) return dir.chunk_size;
  if (dir.placement == Placement::kLocal && config.local_chunk_size.bytes != 0) {
    return config.local_chunk_size.bytes;
  }
  return config.chunk_size.bytes;
}

Status ValidateObjective(const Objective& objective) {
  if (objective.replicas == 0 || objective.replicas > kMaxReplicas) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("replicas must be 1..{}", kMaxReplicas));
  }
  if (objective.chunk_size != 0 &&
      (objective.chunk_size < kChunkSizeAlign || objective.chunk_size % kChunkSizeAlign != 0)) {
    return Status(StatusCode::kInvalidArgument, "chunk-size must be a positive multiple of 4 KiB");
  }
  return Status::Ok();
}

Status ValidateChunkSizes(const MetaConfig& config) {
  const uint64_t chunk = config.chunk_size.bytes;
  if (chunk < kChunkSizeAlign || chunk % kChunkSizeAlign != 0) {
    return Status(StatusCode::kInvalidArgument, "chunk-size must be a positive multiple of 4 KiB");
  }
  if (config.local_chunk_size.bytes % kChunkSizeAlign != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "local-chunk-size must be a multiple of 4 KiB (0 = chunk-size)");
  }
  return Status::Ok();
}

}  // namespace t0fs::meta
