// The replica room's rules: read order and the "known hole" cache.
#include "client/replica_io.h"

#include <gtest/gtest.h>

#include <map>

namespace t0fs::client {
namespace {

ReplicaInfo On(uint64_t node, ReplicaState state = ReplicaState::kHealthy, uint64_t version = 1) {
  return ReplicaInfo{NodeId(node), VolumeId(node), ChunkId(9), version, false, state};
}

std::vector<uint64_t> Nodes(const std::vector<ReplicaInfo>& order) {
  std::vector<uint64_t> out;
  for (const ReplicaInfo& r : order) out.push_back(r.node.value());
  return out;
}

struct Nodes3 {
  uint64_t local = 0;
  std::map<uint64_t, bool> suspect;
  std::map<uint64_t, uint64_t> load;
  std::vector<uint64_t> Order(const std::vector<ReplicaInfo>& replicas) {
    return Nodes(ReadOrder(replicas, [&](const ReplicaInfo& r) {
      return ReplicaRank{suspect[r.node.value()], r.node.value() == local, load[r.node.value()]};
    }));
  }
};

TEST(ReadOrder, LocalFirstThenLeastBusy) {
  Nodes3 n;
  n.local = 3;
  n.load = {{1, 5}, {2, 1}, {3, 9}};
  EXPECT_EQ(n.Order({On(1), On(2), On(3)}), (std::vector<uint64_t>{3, 2, 1}));
}

TEST(ReadOrder, OnlyHealthyReplicas) {
  Nodes3 n;
  EXPECT_EQ(n.Order({On(1, ReplicaState::kStale), On(2), On(3, ReplicaState::kPending)}),
            (std::vector<uint64_t>{2}));
  EXPECT_TRUE(n.Order({On(1, ReplicaState::kStale)}).empty());
}

TEST(ReadOrder, SuspectNodeIsTriedLastAndFirstAgainAfter) {
  Nodes3 n;
  n.local = 1;
  n.suspect[1] = true;  // the local node just failed a request
  EXPECT_EQ(n.Order({On(1), On(2), On(3)}), (std::vector<uint64_t>{2, 3, 1}));
  n.suspect[1] = false;  // it answered (DataClient::Reachable, or the probe found it)
  EXPECT_EQ(n.Order({On(1), On(2), On(3)}), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(ReadOrder, EqualReplicasKeepLayoutOrder) {
  Nodes3 n;
  EXPECT_EQ(n.Order({On(3), On(1), On(2)}), (std::vector<uint64_t>{3, 1, 2}));
}

ChunkInfo InBucket(uint64_t committed, uint64_t object_version, std::vector<NodeId> readers) {
  ChunkInfo c;
  c.replicas = {On(1, ReplicaState::kHealthy, committed),
                On(2, ReplicaState::kStale, committed + 1)};
  c.object_version = object_version;
  c.object_readers = std::move(readers);
  return c;
}

TEST(CanStageBack, OnlyTheCommittedVersionInTheBucketAndNothingWrittenYet) {
  EXPECT_TRUE(CanStageBack(InBucket(3, 3, {NodeId(2)}), /*session_wrote=*/false));
  // This session's earlier bytes are on the lost replicas only.
  EXPECT_FALSE(CanStageBack(InBucket(3, 3, {NodeId(2)}), /*session_wrote=*/true));
  // An older version in the bucket (a stale replica's newer one does not count), none, or
  // nobody to read it.
  EXPECT_FALSE(CanStageBack(InBucket(3, 2, {NodeId(2)}), false));
  EXPECT_TRUE(CanStageBack(InBucket(3, 3, {NodeId(3)}), false));
  EXPECT_FALSE(CanStageBack(InBucket(3, 4, {NodeId(2)}), false));
  EXPECT_FALSE(CanStageBack(InBucket(3, 0, {NodeId(2)}), false));
  EXPECT_FALSE(CanStageBack(InBucket(3, 3, {}), false));
  // Never written: nothing in the bucket to stage.
  EXPECT_FALSE(CanStageBack(InBucket(0, 0, {NodeId(2)}), false));
}

TEST(KnownHole, TrustedOnlyWhileTheLayoutSaysNeverWritten) {
  InodeState::LocalFile hole{nullptr, false};
  EXPECT_TRUE(KnownHoleHolds(hole, /*for_write=*/false, /*version=*/0));
  // The layout now says a writer committed version 1: look the file up again.
  EXPECT_FALSE(KnownHoleHolds(hole, false, 1));
  // A writer never takes a hole: it creates the file.
  EXPECT_FALSE(KnownHoleHolds(hole, true, 0));
}

TEST(KnownHole, OpenFilesAnswerByAccessMode) {
  // A chunk file over no descriptors: only its presence matters here.
  auto open = std::make_shared<ChunkFile>(ChunkId(9), UniqueFd(), UniqueFd(), false);
  InodeState::LocalFile read_only{open, false};
  InodeState::LocalFile writable{open, true};
  EXPECT_TRUE(KnownHoleHolds(read_only, false, 5));
  EXPECT_FALSE(KnownHoleHolds(read_only, true, 5));  // reopened writable
  EXPECT_TRUE(KnownHoleHolds(writable, true, 5));
  EXPECT_TRUE(KnownHoleHolds(writable, false, 5));
}

}  // namespace
}  // namespace t0fs::client
