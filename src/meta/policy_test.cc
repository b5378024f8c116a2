// The service's policy: default chunk sizes and what objectives are accepted.
#include "meta/policy.h"

#include <gtest/gtest.h>

namespace t0fs::meta {
namespace {

InodeAttr Dir(Placement placement, uint64_t chunk_size) {
  InodeAttr dir;
  dir.mode = 040755;
  dir.placement = placement;
  dir.chunk_size = chunk_size;
  return dir;
}

// New files take the large local chunk size under placement=local (Tier 0:
// one chunk file per file), the ordinary one under placement=spread, and a
// directory's explicit chunk size over both.
TEST(Policy, LocalPlacementTakesTheLocalChunkSize) {
  MetaConfig config;
  config.chunk_size.bytes = 1 << 20;
  config.local_chunk_size.bytes = uint64_t{64} << 30;
  EXPECT_EQ(NewFileChunkSize(Dir(Placement::kLocal, 0), config), uint64_t{64} << 30);
  EXPECT_EQ(NewFileChunkSize(Dir(Placement::kSpread, 0), config), uint64_t{1} << 20);
  EXPECT_EQ(NewFileChunkSize(Dir(Placement::kLocal, 8 << 20), config), uint64_t{8} << 20);
  EXPECT_EQ(NewFileChunkSize(Dir(Placement::kSpread, 8 << 20), config), uint64_t{8} << 20);
  config.local_chunk_size.bytes = 0;  // 0 = chunk-size
  EXPECT_EQ(NewFileChunkSize(Dir(Placement::kLocal, 0), config), uint64_t{1} << 20);
}

TEST(Policy, ObjectiveRanges) {
  EXPECT_TRUE(ValidateObjective(Objective{1, Placement::kLocal, {}, 0, {}}).ok());
  EXPECT_TRUE(ValidateObjective(Objective{16, Placement::kSpread, {NodeId(3)}, 4096, {}}).ok());
  EXPECT_TRUE(ValidateObjective(Objective{2, Placement::kLocal, {}, 64 << 20, {}}).ok());
  for (uint32_t replicas : {0u, 17u, 1000u}) {
    EXPECT_EQ(ValidateObjective(Objective{replicas, Placement::kLocal, {}, 0, {}}).code(),
              StatusCode::kInvalidArgument)
        << replicas;
  }
  for (uint64_t chunk :
       {uint64_t{1}, uint64_t{100}, uint64_t{4095}, uint64_t{4097}, uint64_t{6144}}) {
    EXPECT_EQ(ValidateObjective(Objective{1, Placement::kLocal, {}, chunk, {}}).code(),
              StatusCode::kInvalidArgument)
        << chunk;
  }
}

TEST(Policy, ProtectionGoals) {
  auto with = [](uint32_t replicas, Protection p) {
    Objective o;
    o.replicas = replicas;
    o.protect = p;
    return ValidateObjective(o).code();
  };
  const auto replicas = [](uint32_t copies, uint32_t within_s) {
    return Protection{ProtectKind::kReplicas, copies, 0, within_s, KeepLocal::kKeep};
  };
  EXPECT_EQ(with(1, replicas(2, 300)), StatusCode::kOk);
  EXPECT_EQ(with(2, replicas(16, 0)), StatusCode::kOk);
  EXPECT_EQ(with(1, replicas(2, kMaxProtectWithinS)), StatusCode::kOk);
  // Not more copies than written, too many, too late.
  EXPECT_EQ(with(2, replicas(2, 300)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, replicas(17, 300)), StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, replicas(2, kMaxProtectWithinS + 1)), StatusCode::kInvalidArgument);
  // Settings of a goal without a goal.
  EXPECT_EQ(with(1, Protection{ProtectKind::kNone, 0, 0, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  // ec:K+M: K and M at least 1, at most kMaxCells cells.
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 4, 2, 300, KeepLocal::kKeep}), StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 2, 1, 0, KeepLocal::kKeep}), StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 30, 3, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 0, 2, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 2, 0, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  // Rules not served yet say so.
  // protect=object (whether the cluster has an object tier is the handler's
  // check), without a count.
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kKeep}),
            StatusCode::kOk);
  EXPECT_EQ(with(2, Protection{ProtectKind::kObject, 0, 0, 0, KeepLocal::kKeep}), StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 2, 0, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  // keep-local=drop|pressure: with the object tier or cells, never with
  // replicas (the writer's copy is one of them).
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kDrop}),
            StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kEc, 2, 1, 300, KeepLocal::kPressure}),
            StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kReplicas, 2, 0, 300, KeepLocal::kDrop}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 0, 0, 300, static_cast<KeepLocal>(7)}),
            StatusCode::kInvalidArgument);
  // after= delays keep-local=drop only, up to 3650 days.
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kDrop, 86400}),
            StatusCode::kOk);
  EXPECT_EQ(with(1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kPressure, 86400}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      with(1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kDrop, kMaxDropAfterS + 1}),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(with(1, Protection{static_cast<ProtectKind>(9), 2, 0, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  // keep-newest=N: with keep-local=drop|pressure, up to kMaxKeepNewest.
  const auto newest = [](uint32_t n, Protection p) {
    Objective o;
    o.protect = p;
    o.keep_newest = n;
    return ValidateObjective(o).code();
  };
  EXPECT_EQ(newest(3, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kDrop}),
            StatusCode::kOk);
  EXPECT_EQ(newest(kMaxKeepNewest, Protection{ProtectKind::kEc, 2, 1, 300, KeepLocal::kPressure}),
            StatusCode::kOk);
  EXPECT_EQ(
      newest(kMaxKeepNewest + 1, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kDrop}),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(newest(3, Protection{ProtectKind::kObject, 0, 0, 300, KeepLocal::kKeep}),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(newest(3, Protection{}), StatusCode::kInvalidArgument);
}

TEST(Policy, ChunkSizeSettings) {
  MetaConfig config;
  EXPECT_TRUE(ValidateChunkSizes(config).ok());  // the defaults
  config.chunk_size.bytes = 0;
  EXPECT_EQ(ValidateChunkSizes(config).code(), StatusCode::kInvalidArgument);
  config.chunk_size.bytes = 1000;
  EXPECT_EQ(ValidateChunkSizes(config).code(), StatusCode::kInvalidArgument);
  config.chunk_size.bytes = 8192;
  config.local_chunk_size.bytes = 0;
  EXPECT_TRUE(ValidateChunkSizes(config).ok());
  config.local_chunk_size.bytes = 5000;
  EXPECT_EQ(ValidateChunkSizes(config).code(), StatusCode::kInvalidArgument);
}

TEST(Policy, TieringWatermarks) {
  MetaConfig config;
  EXPECT_TRUE(ValidateTiering(config).ok());  // 90 and 80
  config.tier_low_watermark = 90;
  EXPECT_EQ(ValidateTiering(config).code(), StatusCode::kInvalidArgument);
  config.tier_low_watermark = 0;
  config.tier_high_watermark = 101;
  EXPECT_EQ(ValidateTiering(config).code(), StatusCode::kInvalidArgument);
  config.tier_high_watermark = 100;
  EXPECT_TRUE(ValidateTiering(config).ok());
}

}  // namespace
}  // namespace t0fs::meta
