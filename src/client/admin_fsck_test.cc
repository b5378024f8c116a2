// AdminClient::Fsck over a fake cluster (the AdminClient calls it is built
// from, answered from memory): what is a problem, a warning or a note.
#include <gtest/gtest.h>

#include <map>

#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

// A cluster in memory: nodes, meta's check and replicas, the chunk files of
// each (address, volume), objectives and layouts of files.
class FakeAdmin final : public AdminClient {
 public:
  ClusterStatus cluster;
  NamespaceCheck check;
  std::vector<ChunkRef> refs;
  std::map<std::pair<std::string, uint64_t>, std::vector<StoredChunk>>
      files;  // (address, volume) → files
  std::map<uint64_t, Objective> objectives;
  std::map<uint64_t, std::vector<ChunkInfo>> layouts;

  void AddNode(uint64_t id, const std::string& state) {
    NodeStatus n;
    n.node = NodeId(id);
    n.address = "n" + std::to_string(id);
    n.state = state;
    n.volumes.push_back(VolumeStatus{VolumeId(id), "", "/v", 0, 0, 0});
    cluster.nodes.push_back(n);
    files[{n.address, id}];
  }
  // A replica in a layout (or queued for removal) and, `on_disk`, its file.
  void AddReplica(uint64_t chunk, uint64_t node, uint64_t ino, bool on_disk, uint64_t version = 1,
                  bool garbage = false) {
    refs.push_back(
        ChunkRef{ChunkId(chunk), NodeId(node), VolumeId(node), version, InodeId(ino), 0, garbage});
    if (on_disk)
      files[{"n" + std::to_string(node), node}].push_back(
          StoredChunk{ChunkId(chunk), VolumeId(node), 8, version});
  }

  Result<InodeId> Resolve(std::string_view) override { return Unused(); }
  Result<Attr> GetAttr(InodeId) override { return Unused(); }
  Result<std::vector<ChunkInfo>> Chunks(InodeId ino) override {
    auto it = layouts.find(ino.value());
    if (it == layouts.end()) return Status(StatusCode::kNotFound, "no layout");
    return it->second;
  }
  Result<Objective> GetObjective(InodeId ino) override {
    auto it = objectives.find(ino.value());
    if (it == objectives.end()) return Status(StatusCode::kNotFound, "no inode");
    return it->second;
  }
  Result<ObjectiveSet> SetObjective(InodeId, const Objective&, bool) override { return Unused(); }
  Result<ClusterStatus> GetStatus() override { return cluster; }
  Status Drain(NodeId) override { return Unused(); }
  Status Undrain(NodeId) override { return Unused(); }
  Result<NamespaceCheck> CheckNamespace() override { return check; }
  Result<std::vector<ChunkRef>> ChunkRefs() override { return refs; }
  Result<std::vector<StoredChunk>> StoredChunks(const std::string& address,
                                                VolumeId volume) override {
    auto it = files.find({address, volume.value()});
    if (it == files.end()) return Status(StatusCode::kRpcTimeout, "no answer");
    return it->second;
  }
  Result<uint64_t> QueueOrphans(NodeId, const std::vector<StoredChunk>&) override {
    return Unused();
  }

 private:
  static Status Unused() { return Status(StatusCode::kInternal, "not used by fsck"); }
};

TEST(Fsck, ConsistentClusterIsClean) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddNode(2, "draining");
  admin.check.inodes = 3;
  admin.AddReplica(10, 1, 5, true);
  admin.AddReplica(10, 2, 5, true);
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->clean());
  EXPECT_EQ(report->inodes, 3u);
  EXPECT_EQ(report->meta_chunks, 2u);
  EXPECT_EQ(report->chunk_files, 2u);
  EXPECT_EQ(report->nodes_checked, 2u);
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_TRUE(report->notes.empty());
}

TEST(Fsck, MissingStaleAndOrphanFilesAreProblems) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.check.problems = {"dentry 5 points to no inode"};
  admin.AddReplica(10, 1, 5, false);                 // committed, no file: missing
  admin.AddReplica(11, 1, 5, false, /*version=*/0);  // never written: no file expected
  admin.AddReplica(12, 1, 6, true, /*version=*/3);
  admin.files[{"n1", 1}].back().version = 2;  // file older than meta: stale
  admin.files[{"n1", 1}].push_back(
      StoredChunk{ChunkId(13), VolumeId(1), 8, 1});  // in no layout: orphan
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->clean());
  EXPECT_EQ(report->problems, (std::vector<std::string>{
                                  "namespace: dentry 5 points to no inode",
                                  "missing: chunk 10 (inode 5, chunk #0) has no file on node 1",
                                  "stale: chunk 12 on node 1 is at version 2, meta says 3",
                                  "orphan: chunk file 13 on node 1 (8 bytes) is in no layout",
                              }));
  // The orphans also by node, for `fsck --remove-orphans`.
  ASSERT_EQ(report->orphans.size(), 1u);
  ASSERT_EQ(report->orphans.at(NodeId(1)).size(), 1u);
  EXPECT_EQ(report->orphans.at(NodeId(1))[0].chunk.value(), 13u);
  EXPECT_EQ(report->orphans.at(NodeId(1))[0].version, 1u);
}

TEST(Fsck, NodesThatCannotBeListedAreWarningsNotProblems) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddNode(2, "suspect");
  admin.AddNode(3, "up");
  admin.files.erase({"n3", 3});  // does not answer
  admin.AddReplica(10, 1, 5, true);
  admin.AddReplica(10, 2, 5, false);
  admin.AddReplica(10, 3, 5, false);
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
  EXPECT_EQ(report->nodes_checked, 1u);
  EXPECT_EQ(report->nodes_unchecked, 2u);
  ASSERT_EQ(report->warnings.size(), 2u);
  EXPECT_EQ(report->warnings[0], "node 2 (n2) is suspect: its chunk files were not checked");
  EXPECT_EQ(report->warnings[1], "node 3: cannot list volume 3: timed out: no answer")
      << "the status as the node's call returned it";
}

TEST(Fsck, ReplacedReplicasAwaitingRemovalAreNotes) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddNode(2, "up");
  admin.AddReplica(10, 1, 5, true);
  admin.AddReplica(10, 2, 5, true, 1, /*garbage=*/true);  // replaced by repair
  admin.AddReplica(20, 2, 6, true, 1, /*garbage=*/true);  // of a deleted file
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->clean());
  ASSERT_EQ(report->notes.size(), 2u);
  EXPECT_EQ(report->notes[0],
            "pending removal: chunk 10 (inode 5, chunk #0) was replaced on node 2 (up); the old "
            "copy is removed "
            "when that node takes it; the chunk lives on node(s) 1");
  EXPECT_EQ(report->notes[1], "1 chunk file(s) of deleted data await removal");
}

// Meta's check names what is below its objective (replicas on down nodes
// not counted: store_check_test); fsck passes it on with repair's progress.
TEST(Fsck, BelowObjectiveLinesComeWithRepairProgress) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddNode(2, "down");
  admin.cluster.copies_running = 1;
  admin.check.below_objective = {"chunk 30 has 0 of 1"};  // meta's own line
  admin.AddReplica(10, 1, 5, true);
  admin.AddReplica(10, 2, 5, false);
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->clean());
  EXPECT_EQ(report->below_objective, (std::vector<std::string>{"chunk 30 has 0 of 1"}));
  ASSERT_EQ(report->warnings.size(), 1u);  // node 2 not checked
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_EQ(report->notes[0],
            "repair is running: 0 chunk(s) below objective, 1 copies running (t0fs status shows "
            "its progress)");
}

TEST(Fsck, FilesWaitingForProtectionAreANote) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddReplica(10, 1, 5, true);
  admin.cluster.protect_waiting_files = 3;
  admin.cluster.protect_overdue_files = 1;  // meta's check names that one
  admin.cluster.protect_waiting_bytes = 3u << 20;
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->clean());
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_EQ(report->notes[0],
            "protection: 2 file(s) wait for their protect= copies within their deadline (3 MiB in "
            "all; t0fs status)");
}

TEST(Fsck, LongListsAreCapped) {
  FakeAdmin admin;
  admin.AddNode(1, "up");
  admin.AddNode(2, "up");
  for (uint64_t chunk = 1; chunk <= kMaxFsckLines + 5; ++chunk) {
    admin.AddReplica(chunk, 1, 5, true);
    admin.AddReplica(chunk, 2, 5, true, 1, /*garbage=*/true);
  }
  auto report = admin.Fsck();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->notes.size(), kMaxFsckLines + 1);
  EXPECT_EQ(report->notes.back(), "... and 5 more like the line above");
}

}  // namespace
}  // namespace t0fs::client
