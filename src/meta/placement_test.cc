// Placement: which nodes and volumes a new chunk's replicas go to.
#include "meta/placement.h"

#include <gtest/gtest.h>

namespace t0fs::meta {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

NodeRecord Node(uint64_t id, std::vector<uint64_t> free_gib) {
  NodeRecord n;
  n.node = NodeId(id);
  for (size_t i = 0; i < free_gib.size(); ++i) {
    VolumeRecord v;
    v.volume = VolumeId(id * 10 + i + 1);
    v.node = n.node;
    v.free_bytes = free_gib[i] * kGiB;
    n.volumes.push_back(v);
  }
  return n;
}

std::vector<NodeChoice> Usable(const std::vector<NodeRecord>& nodes) {
  std::vector<NodeChoice> out;
  for (const NodeRecord& n : nodes) out.push_back(NodeChoice{&n, true, 0});
  return out;
}

// A node that misses heartbeats is placed on only when those that heartbeat
// are too few: after them, the writer's own node included; and still
// used (allow_fewer) rather than leave a replica out.
TEST(Placement, SuspectNodesLast) {
  std::vector<NodeRecord> nodes{Node(1, {50}), Node(2, {5}), Node(3, {20})};
  std::vector<NodeChoice> choices = Usable(nodes);
  choices[0].suspect = true;  // the writer's node, and the roomiest
  PlacementRequest req;
  req.writer = NodeId(1);
  req.replicas = 2;
  req.chunk_size = 64 << 20;
  auto targets = ChooseTargets(choices, req);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_EQ((*targets)[0].node, NodeId(3));
  EXPECT_EQ((*targets)[1].node, NodeId(2));
  req.replicas = 3;
  targets = ChooseTargets(choices, req);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_EQ(targets->size(), 3u);
  EXPECT_EQ((*targets)[2].node, NodeId(1));
  choices[1].usable = choices[2].usable = false;  // only the suspect one is left
  req.replicas = 1;
  targets = ChooseTargets(choices, req);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  EXPECT_EQ((*targets)[0].node, NodeId(1));
}

// A chunk that only nodes that are down could take is waited for
// (kMetaNodesDown: a node that restarts); one that only lost nodes could
// take fails with EIO (kMetaNodesLost); one that no node has room for, or
// only draining ones, fails (kMetaNoVolumes, ENOSPC).
TEST(Placement, DownNodesAreWaitedForFullOnesAreNoSpace) {
  std::vector<NodeRecord> nodes{Node(1, {50}), Node(2, {0})};
  std::vector<NodeChoice> choices = Usable(nodes);
  choices[0].usable = false;
  choices[0].down = true;
  PlacementRequest req;
  req.chunk_size = 64 << 20;
  req.allow_fewer = true;
  EXPECT_EQ(ChooseTargets(choices, req).status().code(), StatusCode::kMetaNodesDown);
  choices[0].down = false;  // down for longer than repair-grace: not waited for, and not "no space"
  choices[0].lost = true;
  EXPECT_EQ(ChooseTargets(choices, req).status().code(), StatusCode::kMetaNodesLost);
  choices[0].lost = false;  // draining instead
  EXPECT_EQ(ChooseTargets(choices, req).status().code(), StatusCode::kMetaNoVolumes);
  choices[0].usable = true;
  auto targets = ChooseTargets(choices, req);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  EXPECT_EQ(targets->front().node, NodeId(1));
}

// Local placement puts the first replica on the writer's node, on its volume
// with most room, and the others on the roomiest other nodes.
TEST(Placement, LocalFirstThenRoomiest) {
  std::vector<NodeRecord> nodes{Node(1, {5, 9}), Node(2, {50}), Node(3, {20})};
  PlacementRequest req;
  req.writer = NodeId(1);
  req.replicas = 2;
  req.chunk_size = 64 << 20;
  auto targets = ChooseTargets(Usable(nodes), req);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_EQ((*targets)[0].node, NodeId(1));
  EXPECT_EQ((*targets)[0].volume, VolumeId(12));
  EXPECT_EQ((*targets)[1].node, NodeId(2));
  EXPECT_EQ(VolumeFor(nodes[0], 64 << 20), VolumeId(12));
  EXPECT_FALSE(VolumeFor(Node(4, {0}), 64 << 20).valid());
}

// The writer's chosen volume (where it prepared the chunk's files) is used
// on its node when it has room; otherwise the roomiest, as without a choice.
TEST(Placement, TheWritersVolumeWhenItHasRoom) {
  std::vector<NodeRecord> nodes{Node(1, {5, 9})};
  PlacementRequest req;
  req.writer = NodeId(1);
  req.chunk_size = 64 << 20;
  req.writer_volume = VolumeId(11);
  auto targets = ChooseTargets(Usable(nodes), req);
  ASSERT_TRUE(targets.ok());
  EXPECT_EQ((*targets)[0].volume, VolumeId(11));

  nodes[0].volumes[0].free_bytes = 1 << 20;  // full
  targets = ChooseTargets(Usable(nodes), req);
  ASSERT_TRUE(targets.ok());
  EXPECT_EQ((*targets)[0].volume, VolumeId(12));

  req.writer_volume = VolumeId(99);  // not a volume of the node
  targets = ChooseTargets(Usable(nodes), req);
  ASSERT_TRUE(targets.ok());
  EXPECT_EQ((*targets)[0].volume, VolumeId(12));
}

}  // namespace
}  // namespace t0fs::meta
