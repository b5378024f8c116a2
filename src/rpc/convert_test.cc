// rpc/convert.h: each mapping round-trips, with record types shaped as
// libt0fs's and meta's are (the same field names, their own enums).
#include "rpc/convert.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace t0fs::rpc {
namespace {

struct TestAttr {
  InodeId ino;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0;
  uint32_t nlink = 0, rdev = 0;
  Timespec atime, mtime, ctime;
  uint64_t chunk_size = 0, generation = 0;
};

enum class TestReplicaState : uint32_t { kHealthy = 0, kStale = 1, kPending = 2, kOffloaded = 3 };
struct TestReplica {
  NodeId node;
  VolumeId volume;
  ChunkId chunk;
  uint64_t version = 0;
  TestReplicaState state = TestReplicaState::kHealthy;
};
struct TestChunk {
  uint64_t index = 0;
  std::vector<TestReplica> replicas;
  uint64_t object_version = 0;
  std::string ec{};
};

enum class TestPlacement : uint32_t { kLocal = 0, kSpread = 1 };
enum class TestProtectKind : uint32_t { kNone = 0, kReplicas = 1, kEc = 2, kObject = 3 };
enum class TestKeepLocal : uint32_t { kKeep = 0, kDrop = 1, kPressure = 2 };
struct TestProtection {
  TestProtectKind kind = TestProtectKind::kNone;
  uint32_t copies = 0, parity = 0, within_s = 0;
  TestKeepLocal keep_local = TestKeepLocal::kKeep;
  uint32_t drop_after_s = 0;
};
struct TestObjective {
  uint32_t replicas = 1;
  TestPlacement placement = TestPlacement::kLocal;
  std::vector<NodeId> nodes;
  uint64_t chunk_size = 0;
  TestProtection protect;
  uint32_t keep_newest = 0;
};

struct TestToken {
  SessionId session;
  uint32_t slot = 0;
  uint64_t seq = 0;
};

TEST(Convert, AttrRoundTrip) {
  TestAttr in{InodeId(7), 0100644, 1, 2, 12345, 1, 0, {1, 2}, {3, 4}, {5, 6}, 1 << 20, 9};
  pb::Attr wire;
  ToWire(in, &wire);
  EXPECT_EQ(wire.ino(), 7u);
  EXPECT_EQ(wire.mtime().sec(), 3);
  TestAttr out = FromWire<TestAttr>(wire);
  EXPECT_EQ(out.ino, in.ino);
  EXPECT_EQ(out.mode, in.mode);
  EXPECT_EQ(out.size, in.size);
  EXPECT_EQ(out.atime, in.atime);
  EXPECT_EQ(out.ctime, in.ctime);
  EXPECT_EQ(out.chunk_size, in.chunk_size);
  EXPECT_EQ(out.generation, in.generation);
}

TEST(Convert, ChunkLayoutKeepsReplicaStatesAsTheirWireNumbers) {
  TestChunk in{3,
               {{NodeId(1), VolumeId(2), ChunkId(3), 4, TestReplicaState::kHealthy},
                {NodeId(5), VolumeId(6), ChunkId(3), 2, TestReplicaState::kStale},
                {NodeId(7), VolumeId(8), ChunkId(3), 0, TestReplicaState::kPending}},
               4,
               "2+1 4096 4 100 1:2,5:6,7:8"};
  pb::ChunkLayout wire;
  ToWire(in, &wire);
  ASSERT_EQ(wire.replicas_size(), 3);
  EXPECT_EQ(wire.replicas(1).state(), pb::REPLICA_STALE);
  EXPECT_EQ(wire.replicas(2).state(), pb::REPLICA_PENDING);
  TestChunk out = FromWire<TestChunk>(wire);
  EXPECT_EQ(out.index, 3u);
  EXPECT_EQ(out.object_version, 4u);
  EXPECT_EQ(out.ec, in.ec);
  ASSERT_EQ(out.replicas.size(), 3u);
  EXPECT_EQ(out.replicas[1].node, NodeId(5));
  EXPECT_EQ(out.replicas[1].version, 2u);
  EXPECT_EQ(out.replicas[1].state, TestReplicaState::kStale);
  EXPECT_EQ(out.replicas[2].state, TestReplicaState::kPending);
}

TEST(Convert, ObjectiveCapabilityTokenAndTime) {
  TestObjective in{2, TestPlacement::kSpread, {NodeId(1), NodeId(3)}, 4096, {}};
  pb::Objective wire;
  ToWire(in, &wire);
  EXPECT_EQ(wire.placement(), pb::PLACEMENT_SPREAD);
  TestObjective out = FromWire<TestObjective>(wire);
  EXPECT_EQ(out.replicas, 2u);
  EXPECT_EQ(out.placement, TestPlacement::kSpread);
  EXPECT_EQ(out.nodes, in.nodes);
  EXPECT_EQ(out.chunk_size, 4096u);
  EXPECT_FALSE(wire.has_protect());  // no goal: nothing on the wire
  EXPECT_EQ(out.protect.kind, TestProtectKind::kNone);

  in.protect = {TestProtectKind::kEc, 4, 2, 300, TestKeepLocal::kDrop, 86400};
  in.keep_newest = 3;
  wire.Clear();
  ToWire(in, &wire);
  EXPECT_EQ(wire.protect().kind(), pb::PROTECT_EC);
  out = FromWire<TestObjective>(wire);
  EXPECT_EQ(out.protect.kind, TestProtectKind::kEc);
  EXPECT_EQ(out.protect.copies, 4u);
  EXPECT_EQ(out.protect.parity, 2u);
  EXPECT_EQ(out.protect.within_s, 300u);
  EXPECT_EQ(out.protect.keep_local, TestKeepLocal::kDrop);
  EXPECT_EQ(out.protect.drop_after_s, 86400u);
  EXPECT_EQ(out.keep_newest, 3u);

  Capability cap{std::string(16, 'm'), 1234, kCapRead | kCapWrite};
  pb::Capability wire_cap;
  ToWire(cap, &wire_cap);
  Capability back = FromWire(wire_cap);
  EXPECT_EQ(back.mac, cap.mac);
  EXPECT_EQ(back.expiry_ms, cap.expiry_ms);
  EXPECT_EQ(back.rights, cap.rights);

  pb::OpToken token;
  token.set_session(5);
  token.set_slot(6);
  token.set_seq(7);
  TestToken t = FromWire<TestToken>(token);
  EXPECT_EQ(t.session, SessionId(5));
  EXPECT_EQ(t.slot, 6u);
  EXPECT_EQ(t.seq, 7u);
}

}  // namespace
}  // namespace t0fs::rpc
