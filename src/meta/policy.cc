#include "meta/policy.h"

#include <fmt/format.h>

#include "ec/erasure_code.h"

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
  const Protection& p = objective.protect;
  switch (p.kind) {
    case ProtectKind::kNone:
      if (p.copies != 0 || p.parity != 0 || p.within_s != 0 || p.keep_local != KeepLocal::kKeep ||
          objective.keep_newest != 0) {
        return Status(StatusCode::kInvalidArgument,
                      "within, keep-local and keep-newest need a protect goal");
      }
      return Status::Ok();
    case ProtectKind::kReplicas:
      if (p.copies <= objective.replicas || p.copies > kMaxReplicas || p.parity != 0) {
        return Status(
            StatusCode::kInvalidArgument,
            fmt::format(
                "protect=replicas:{} must ask for more copies than replicas={} (at most {}; "
                "`sync` drops the background goal)",
                p.copies, objective.replicas, kMaxReplicas));
      }
      break;
    case ProtectKind::kObject:
      if (p.copies != 0 || p.parity != 0) {
        return Status(StatusCode::kInvalidArgument, "protect=object takes no count");
      }
      break;
    case ProtectKind::kEc:
      if (p.copies == 0 || p.parity == 0 || p.copies + p.parity > ec::kMaxCells) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("protect=ec:{}+{}: K and M must be at least 1 and K+M at most "
                                  "{} (each cell on its own node)",
                                  p.copies, p.parity, ec::kMaxCells));
      }
      break;
    default:
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("unknown protect kind {}", static_cast<uint32_t>(p.kind)));
  }
  if (p.within_s > kMaxProtectWithinS) {
    return Status(StatusCode::kInvalidArgument, "within must be at most 30 days");
  }
  if (p.keep_local != KeepLocal::kKeep && p.kind == ProtectKind::kReplicas) {
    return Status(StatusCode::kInvalidArgument,
                  "keep-local=drop|pressure needs protect=object or protect=ec:K+M (with "
                  "protect=replicas the writer's copy is one of the copies)");
  }
  if (p.drop_after_s != 0 && p.keep_local != KeepLocal::kDrop) {
    return Status(StatusCode::kInvalidArgument, "after= needs keep-local=drop");
  }
  if (p.drop_after_s > kMaxDropAfterS) {
    return Status(StatusCode::kInvalidArgument, "after must be at most 3650 days");
  }
  if (objective.keep_newest != 0 && p.keep_local == KeepLocal::kKeep) {
    return Status(StatusCode::kInvalidArgument, "keep-newest= needs keep-local=drop or pressure");
  }
  if (objective.keep_newest > kMaxKeepNewest) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("keep-newest must be at most {}", kMaxKeepNewest));
  }
  if (p.keep_local != KeepLocal::kKeep && p.keep_local != KeepLocal::kDrop &&
      p.keep_local != KeepLocal::kPressure) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("unknown keep-local rule {}", static_cast<uint32_t>(p.keep_local)));
  }
  return Status::Ok();
}

Status ValidateTiering(const MetaConfig& config) {
  if (config.tier_high_watermark == 0 || config.tier_high_watermark > 100 ||
      config.tier_low_watermark >= config.tier_high_watermark) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("tier-low-watermark ({}) must be below tier-high-watermark ({}), "
                              "which is at most 100 (% of a volume)",
                              config.tier_low_watermark, config.tier_high_watermark));
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
