// RepairPlanner: a chunk a writer waits for (MarkUrgent) is recalled from
// the object tier at once, but only while its node misses heartbeats, and
// only when the bucket holds its committed version; and a replica a writer
// may hold uncommitted bytes on stays until the writer closes.
#include "meta/repair.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kChunkBytes = 1 << 20;

class UrgentRecallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStoreOf("sqlite_memory", dir_);
    ASSERT_NE(store_, nullptr);
    node1_ = testing::RegisterTargets(*store_, 1, 1);
    node2_ = testing::RegisterTargets(*store_, 2, 1);
    ASSERT_EQ(node1_.size(), 1u);
    ASSERT_EQ(node2_.size(), 1u);
    const std::string creds = dir_.File("creds");
    std::ofstream(creds) << "access_key = a\nsecret_key = s\n";
    ASSERT_EQ(::chmod(creds.c_str(), 0600), 0);
    ObjectTierConfig tier;
    tier.endpoint = "http://127.0.0.1:9";
    tier.bucket = "b";
    tier.credentials = creds;
    auto opened = ObjectTier::Open(tier, "cid");
    ASSERT_OK(opened);
    tier_ = std::move(*opened);
    config_.repair_grace.value = 300s;  // the ordinary repair does not recall in these tests
    planner_ = std::make_unique<RepairPlanner>(*store_, health_, config_, "key", tier_.get());

    // /f: one chunk on node 1 at version 1, under replicas=1 protect=object.
    MakeNodeArgs a;
    a.parent = kRootInode;
    a.name = "f";
    a.mode = S_IFREG | 0644;
    a.chunk_size = kChunkBytes;
    auto made = store_->MakeNode(OpToken{}, a, testing::T(100));
    ASSERT_OK(made);
    file_ = made->attr.ino;
    Objective obj;
    obj.replicas = 1;
    obj.protect.kind = ProtectKind::kObject;
    ASSERT_OK(store_->SetObjective(file_, obj, false));
    auto layout = store_->Allocate(OpToken{}, file_, {0}, node1_);
    ASSERT_OK(layout);
    ASSERT_EQ(layout->size(), 1u);
    chunk_ = layout->front().replicas.front().chunk;
    CommitArgs c{file_, HandleId(), kChunkBytes, testing::T(110), {WrittenChunk(chunk_, 1)}};
    ASSERT_OK(store_->Commit(OpToken{}, c, false, testing::T(110)));
  }

  // Node 1 last heartbeat `silence` ago; node 2 just now.
  void Heartbeats(std::chrono::steady_clock::duration silence) {
    health_.SeenAgo(NodeId(1), silence);
    health_.Seen(NodeId(2));
  }
  // The copy commands the pass queued for node 2.
  std::vector<pb::NodeCommand> CopiesToNode2() {
    std::vector<pb::NodeCommand> copies;
    for (pb::NodeCommand& cmd : planner_->TakeCommands(NodeId(2))) {
      if (cmd.kind() == pb::COMMAND_COPY) copies.push_back(std::move(cmd));
    }
    return copies;
  }
  // A heartbeat of node 2 reporting `copy` done at version 1.
  pb::HeartbeatReq CopyDone(const pb::NodeCommand& copy) {
    pb::HeartbeatReq beat;
    pb::CopyResult* done = beat.add_copies();
    done->set_id(copy.id());
    done->set_chunk(chunk_.value());
    done->set_ok(true);
    done->set_version(1);
    done->set_bytes(kChunkBytes);
    return beat;
  }
  // node → state of the chunk's replicas.
  std::map<uint64_t, ReplicaState> Replicas() {
    std::map<uint64_t, ReplicaState> out;
    auto layout = store_->GetLayout(file_, 0, 1);
    EXPECT_OK(layout);
    if (!layout.ok() || layout->empty()) return out;
    for (const auto& r : layout->front().replicas) out[r.node.value()] = r.state;
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<MetaStore> store_;
  std::vector<ReplicaTarget> node1_, node2_;
  std::unique_ptr<ObjectTier> tier_;
  MetaConfig config_;
  NodeHealth health_{3s, 10s};
  std::unique_ptr<RepairPlanner> planner_;
  InodeId file_;
  ChunkId chunk_;
};

TEST_F(UrgentRecallTest, RecalledAtOnceWhenTheNodeMissesHeartbeats) {
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  Heartbeats(5s);  // node 1 suspect, far from repair-grace
  planner_->RunPass();
  EXPECT_TRUE(CopiesToNode2().empty()) << "recalled before repair-grace without a writer waiting";

  EXPECT_TRUE(planner_->MarkUrgent(chunk_));
  EXPECT_FALSE(planner_->MarkUrgent(chunk_));  // idempotent: the mark is extended
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].chunk(), chunk_.value());
  EXPECT_EQ(copies[0].version(), 1u);
  EXPECT_EQ(copies[0].object_key(), tier_->Key(chunk_, 1));
  EXPECT_EQ(planner_->Stats().recalls, 1u);
  EXPECT_EQ(planner_->Stats().urgent_recalls, 1u);
  EXPECT_EQ(Replicas()[2], ReplicaState::kPending);

  // The recall lands: node 1's replica leaves the layout at the next pass.
  Heartbeats(5s);
  planner_->OnHeartbeat(NodeId(2), CopyDone(copies[0]));
  planner_->RunPass();
  auto replicas = Replicas();
  EXPECT_EQ(replicas.size(), 1u);
  EXPECT_EQ(replicas[2], ReplicaState::kHealthy);
  EXPECT_EQ(planner_->Stats().urgent_recalls, 1u);
}

TEST_F(UrgentRecallTest, NeverWhileTheNodeHeartbeats) {
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  Heartbeats(0s);
  EXPECT_TRUE(planner_->MarkUrgent(chunk_));
  planner_->RunPass();
  EXPECT_TRUE(CopiesToNode2().empty()) << "copied on a client's word while node 1 heartbeats";
  EXPECT_EQ(Replicas().size(), 1u);
  // Node 1 falls silent while the mark lasts: now it is recalled.
  Heartbeats(4s);
  planner_->RunPass();
  EXPECT_EQ(CopiesToNode2().size(), 1u);
}

TEST_F(UrgentRecallTest, NothingToRecallWithoutTheCommittedVersionInTheBucket) {
  Heartbeats(5s);
  EXPECT_TRUE(planner_->MarkUrgent(chunk_));
  planner_->RunPass();  // no object at all
  EXPECT_TRUE(CopiesToNode2().empty());
  // An older version in the bucket: the chunk moved on since.
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  CommitArgs c{file_, HandleId(), kChunkBytes, testing::T(120), {WrittenChunk(chunk_, 2)}};
  ASSERT_OK(store_->Commit(OpToken{}, c, false, testing::T(120)));
  planner_->RunPass();
  EXPECT_TRUE(CopiesToNode2().empty());
  EXPECT_EQ(planner_->Stats().recalls, 0u);
  EXPECT_EQ(Replicas().size(), 1u);
}

TEST_F(UrgentRecallTest, MarkedChunkKeepsItsSurplusReplicas) {
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  Heartbeats(5s);
  planner_->MarkUrgent(chunk_);
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  // Node 1 is back before the pass that would drop its replica: both are
  // good, one more than replicas=1 asks; the writer's bytes may be on node
  // 2's only, so neither goes while the mark lasts.
  Heartbeats(0s);
  planner_->OnHeartbeat(NodeId(2), CopyDone(copies[0]));
  planner_->RunPass();
  auto replicas = Replicas();
  EXPECT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[1], ReplicaState::kHealthy);
  EXPECT_EQ(replicas[2], ReplicaState::kHealthy);
}

// With several meta servers the writer's request may reach one that does
// not plan repairs: the mark is in the store, where the planning one reads
// it at its next pass.
TEST_F(UrgentRecallTest, AMarkMadeByAnotherServerIsActedOn) {
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  Heartbeats(5s);
  NodeHealth other_health{3s, 10s};
  RepairPlanner other(*store_, other_health, config_, "key", tier_.get());
  EXPECT_TRUE(other.MarkUrgent(chunk_));
  EXPECT_FALSE(planner_->MarkUrgent(chunk_));  // marked already (by the other): extended
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].chunk(), chunk_.value());
  EXPECT_EQ(planner_->Stats().urgent_recalls, 1u);
}

TEST_F(UrgentRecallTest, MarksAreBounded) {
  for (size_t i = 0; i < RepairPlanner::kMaxUrgent; ++i)
    EXPECT_TRUE(planner_->MarkUrgent(ChunkId(1000 + i)));
  EXPECT_FALSE(planner_->MarkUrgent(ChunkId(1)));     // full, none expired: refused
  EXPECT_FALSE(planner_->MarkUrgent(ChunkId(1000)));  // marked already: extended
}

// A replica on a draining node (or a surplus one) may hold bytes a writer
// has not committed yet, which a copy made during the write lacks: it
// leaves the layout only after the last writer closed.
TEST_F(UrgentRecallTest, ReplicaOfAnOpenWriterStaysUntilItCloses) {
  Objective obj;
  obj.replicas = 1;  // no protection goal: the planner's own copy only
  ASSERT_OK(store_->SetObjective(file_, obj, false));
  auto session = store_->OpenSession("writer", "h", testing::T(120));
  ASSERT_OK(session);
  auto opened = store_->Open(OpToken{}, *session, file_, O_WRONLY, testing::T(120));
  ASSERT_OK(opened);
  ASSERT_OK(store_->SetNodeAdminState(NodeId(1), NodeAdminState::kDraining));
  Heartbeats(0s);
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  planner_->OnHeartbeat(NodeId(2), CopyDone(copies[0]));
  planner_->RunPass();
  auto replicas = Replicas();
  EXPECT_EQ(replicas.size(), 2u) << "the writer's replica on the draining node was dropped";
  EXPECT_EQ(replicas[1], ReplicaState::kHealthy);

  // The writer commits to node 1 only (its layout): node 2's copy of
  // version 1 becomes stale, and is copied again from node 1.
  CommitArgs c{file_, opened->handle, kChunkBytes, testing::T(130), {WrittenChunk(chunk_, 2)}};
  c.written[0].nodes = {NodeId(1)};
  ASSERT_OK(store_->Commit(OpToken{}, c, false, testing::T(130)));
  EXPECT_EQ(Replicas()[2], ReplicaState::kStale);
  ASSERT_OK(store_->Release(OpToken{}, opened->handle));
  planner_->RunPass();
  copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].version(), 2u);
  EXPECT_EQ(copies[0].source_node(), 1u);
  pb::HeartbeatReq done = CopyDone(copies[0]);
  done.mutable_copies(0)->set_version(2);
  planner_->OnHeartbeat(NodeId(2), done);
  planner_->RunPass();  // closed: the draining node's replica goes now
  replicas = Replicas();
  EXPECT_EQ(replicas.size(), 1u);
  EXPECT_EQ(replicas[2], ReplicaState::kHealthy);
}

// keep-local=drop|pressure: the writer's copy goes once the bucket holds
// the committed version, stays gone while nobody writes, and comes back
// when a writer asks (MarkUrgent).
class KeepLocalTest : public UrgentRecallTest {
 protected:
  // replicas=1 protect=object keep-local=`keep`.
  static Objective Tiered(KeepLocal keep) {
    Objective obj;
    obj.replicas = 1;
    obj.protect.kind = ProtectKind::kObject;
    obj.protect.keep_local = keep;
    return obj;
  }
  void Keep(KeepLocal keep, InodeId ino) {
    ASSERT_OK(store_->SetObjective(ino, Tiered(keep), false));
  }
  // The copies nodes 1 and 2 are told to make (recalls among them).
  std::vector<pb::NodeCommand> TakeCopies() {
    std::vector<pb::NodeCommand> copies;
    for (uint64_t n : {1, 2}) {
      for (pb::NodeCommand& cmd : planner_->TakeCommands(NodeId(n))) {
        if (cmd.kind() == pb::COMMAND_COPY) copies.push_back(std::move(cmd));
      }
    }
    return copies;
  }
  // Node 1's volume reports `total_bytes` with `free_bytes` free at `when`.
  void ReportVolume(uint64_t total_bytes, uint64_t free_bytes, int64_t when) {
    VolumeRecord vol;
    vol.volume = node1_[0].volume;
    vol.node = NodeId(1);
    vol.total_bytes = total_bytes;
    vol.free_bytes = free_bytes;
    ASSERT_OK(store_->UpdateVolumes(NodeId(1), {vol}, testing::T(when)));
  }
  // A client opens `ino` for reading at `when` (its atime moves) and closes it.
  void ReadOpen(InodeId ino, int64_t when) {
    auto session = store_->OpenSession("client", "h", testing::T(when));
    ASSERT_OK(session);
    auto opened = store_->Open(OpToken{}, *session, ino, O_RDONLY, testing::T(when));
    ASSERT_OK(opened);
    ASSERT_OK(store_->Release(OpToken{}, opened->handle));
  }
  // keep-local=drop after=`after_s`.
  void DropAfter(InodeId ino, uint32_t after_s) {
    Objective obj = Tiered(KeepLocal::kDrop);
    obj.protect.drop_after_s = after_s;
    ASSERT_OK(store_->SetObjective(ino, obj, false));
  }
  // The replica rows of `ino`'s chunk 0: node → (state, version).
  std::map<uint64_t, std::pair<ReplicaState, uint64_t>> Rows(InodeId ino) {
    std::map<uint64_t, std::pair<ReplicaState, uint64_t>> out;
    auto layout = store_->GetLayout(ino, 0, 1);
    EXPECT_OK(layout);
    if (!layout.ok() || layout->empty()) return out;
    for (const auto& r : layout->front().replicas) out[r.node.value()] = {r.state, r.version};
    return out;
  }
  // Chunk ids node 1 is told to remove.
  std::set<uint64_t> Garbage1() {
    std::set<uint64_t> out;
    auto g = store_->TakeGarbage(NodeId(1), 100);
    EXPECT_OK(g);
    if (g.ok()) {
      for (const GarbageChunk& c : *g) out.insert(c.chunk.value());
    }
    return out;
  }
  // A file of `chunks` 1 MiB chunks on node 1 at version 1, changed at
  // `when`, in the bucket; its first chunk.
  std::pair<InodeId, ChunkId> File(const std::string& name, int64_t when, KeepLocal keep,
                                   uint64_t chunks = 1, InodeId parent = kRootInode) {
    MakeNodeArgs a;
    a.parent = parent;
    a.name = name;
    a.mode = S_IFREG | 0644;
    a.chunk_size = kChunkBytes;
    auto made = store_->MakeNode(OpToken{}, a, testing::T(when));
    EXPECT_OK(made);
    const InodeId ino = made->attr.ino;
    Keep(keep, ino);
    std::vector<uint64_t> indices;
    for (uint64_t i = 0; i < chunks; ++i) indices.push_back(i);
    auto layout = store_->Allocate(OpToken{}, ino, indices, node1_);
    EXPECT_OK(layout);
    CommitArgs c{ino, HandleId(), chunks * kChunkBytes, testing::T(when), {}};
    for (const ChunkLayout& l : *layout)
      c.written.push_back(WrittenChunk(l.replicas.front().chunk, 1));
    EXPECT_OK(store_->Commit(OpToken{}, c, false, testing::T(when)));
    for (const ChunkLayout& l : *layout)
      EXPECT_OK(store_->SetObjectVersion(l.replicas.front().chunk, 1));
    return {ino, layout->front().replicas.front().chunk};
  }
};

TEST_F(KeepLocalTest, DroppedOnceInTheBucketNotRecalledUntilAWriterAsks) {
  Keep(KeepLocal::kDrop, file_);
  Heartbeats(0s);
  planner_->RunPass();  // not in the bucket yet: kept, an upload is ordered
  EXPECT_EQ(Rows(file_)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(planner_->Stats().offloads, 0u);
  std::vector<pb::NodeCommand> uploads = planner_->TakeCommands(NodeId(1));
  ASSERT_EQ(uploads.size(), 1u);
  ASSERT_EQ(uploads[0].kind(), pb::COMMAND_UPLOAD);
  pb::HeartbeatReq uploaded = CopyDone(uploads[0]);
  planner_->OnHeartbeat(NodeId(1), uploaded);  // the bucket holds version 1 now
  planner_->RunPass();
  EXPECT_EQ(Rows(file_)[1], std::make_pair(ReplicaState::kOffloaded, uint64_t{1}));
  EXPECT_EQ(planner_->Stats().offloads, 1u);
  EXPECT_EQ(Garbage1(), std::set<uint64_t>{chunk_.value()});
  // fsck: consistent, nothing below objective; no file to look for on the node.
  auto problems = store_->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << problems->front();
  bool eof = false;
  auto refs = store_->ListChunks(ChunkId(), 100, &eof);
  ASSERT_OK(refs);
  for (const ChunkRecord& r : *refs)
    EXPECT_TRUE(r.garbage) << "an offloaded replica listed as live";
  // A client's report of the missing file does not make it stale.
  ASSERT_OK(store_->SetReplicaState(chunk_, NodeId(1), ReplicaState::kStale));
  EXPECT_EQ(Rows(file_)[1].first, ReplicaState::kOffloaded);

  // Offloaded and not asked for: never recalled, whatever the node does.
  planner_->RunPass();
  EXPECT_EQ(planner_->Stats().offloaded_chunks, 1u);  // counted by the pass that finds it so
  EXPECT_EQ(planner_->Stats().offloaded_bytes, kChunkBytes);
  Heartbeats(5s);
  planner_->RunPass();
  EXPECT_TRUE(CopiesToNode2().empty());
  EXPECT_TRUE(planner_->TakeCommands(NodeId(1)).empty());
  EXPECT_EQ(planner_->Stats().recalls, 0u);

  // A writer asks: staged back at the next pass (node 1 may take it again;
  // it is down here, so node 2).
  EXPECT_TRUE(planner_->MarkUrgent(chunk_));
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = CopiesToNode2();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].object_key(), tier_->Key(chunk_, 1));
  EXPECT_EQ(copies[0].version(), 1u);
  planner_->OnHeartbeat(NodeId(2), CopyDone(copies[0]));
  planner_->RunPass();  // healthy again: the offloaded row leaves; kept while marked
  auto rows = Rows(file_);
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[2], std::make_pair(ReplicaState::kHealthy, uint64_t{1}));
  problems = store_->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << problems->front();
}

// Not while the file is open, for reading too: a mount may serve a reader
// from that very chunk file (passthrough), and a writer could join it.
// A client cut off past its session lease lost its handles, so its file
// could be offloaded under it; its writes then went to a removed chunk file
// (a passthrough mount's kernel writes into the descriptor it holds). Its
// commit is refused: the size and version stay, nothing claims the bytes.
TEST_F(KeepLocalTest, ACommitOfWritesToAnOffloadedCopyIsRefused) {
  auto [f, chunk] = File("late", 100, KeepLocal::kDrop);
  Heartbeats(0s);
  planner_->RunPass();
  ASSERT_EQ(Rows(f)[1].first, ReplicaState::kOffloaded);
  const uint64_t size = store_->GetAttr(f)->size;
  for (const std::vector<NodeId>& nodes : {std::vector<NodeId>{NodeId(1)}, std::vector<NodeId>{}}) {
    CommitArgs late{f, HandleId(), size + 4096, testing::T(200), {WrittenChunk(chunk, 2, nodes)}};
    EXPECT_EQ(store_->Commit(OpToken{}, late, false, testing::T(200)).status().code(),
              StatusCode::kStale);
  }
  EXPECT_EQ(store_->GetAttr(f)->size, size);
  EXPECT_EQ(Rows(f)[1], std::make_pair(ReplicaState::kOffloaded, uint64_t{1}));
}

TEST_F(KeepLocalTest, NotWhileTheFileIsOpen) {
  Keep(KeepLocal::kDrop, file_);
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  auto session = store_->OpenSession("client", "h", testing::T(120));
  ASSERT_OK(session);
  Heartbeats(0s);
  for (int flags : {O_RDWR, O_RDONLY}) {
    auto opened = store_->Open(OpToken{}, *session, file_, flags, testing::T(120));
    ASSERT_OK(opened);
    planner_->RunPass();
    EXPECT_EQ(Rows(file_)[1].first, ReplicaState::kHealthy) << flags;
    EXPECT_EQ(store_->OffloadReplica(chunk_, NodeId(1), 1).code(), StatusCode::kBusy) << flags;
    ASSERT_OK(store_->Release(OpToken{}, opened->handle));
  }
  // Only at the chunk's version, only a healthy replica.
  EXPECT_EQ(store_->OffloadReplica(chunk_, NodeId(1), 2).code(), StatusCode::kStale);
  EXPECT_EQ(store_->OffloadReplica(chunk_, NodeId(2), 1).code(), StatusCode::kStale);
  planner_->RunPass();
  EXPECT_EQ(Rows(file_)[1].first, ReplicaState::kOffloaded);
}

// Only while the tier holds the chunk's version: a chunk written again
// after its upload keeps its copy until the new version is uploaded.
TEST_F(KeepLocalTest, NotBeforeTheBucketHoldsTheChunksVersion) {
  Keep(KeepLocal::kDrop, file_);
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  CommitArgs c{file_, HandleId(), kChunkBytes, testing::T(120), {WrittenChunk(chunk_, 2)}};
  ASSERT_OK(store_->Commit(OpToken{}, c, false, testing::T(120)));
  EXPECT_EQ(store_->OffloadReplica(chunk_, NodeId(1), 2).code(), StatusCode::kInvalidArgument);
  Heartbeats(0s);
  planner_->RunPass();
  EXPECT_EQ(Rows(file_)[1], std::make_pair(ReplicaState::kHealthy, uint64_t{2}));
  std::vector<pb::NodeCommand> uploads = planner_->TakeCommands(NodeId(1));
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_EQ(uploads[0].kind(), pb::COMMAND_UPLOAD);
  pb::HeartbeatReq uploaded = CopyDone(uploads[0]);
  uploaded.mutable_copies(0)->set_version(2);
  planner_->OnHeartbeat(NodeId(1), uploaded);  // the bucket holds version 2 now
  planner_->RunPass();
  EXPECT_EQ(Rows(file_)[1], std::make_pair(ReplicaState::kOffloaded, uint64_t{2}));
}

// after=: not before the file has gone that long unchanged (its ctime).
TEST_F(KeepLocalTest, DropAfterWaitsForTheFileToAge) {
  const int64_t now = WallNow().sec;
  auto [young, young_chunk] = File("young", now - 60, KeepLocal::kDrop);
  auto [old, old_chunk] = File("old", now - 7200, KeepLocal::kDrop);
  for (InodeId ino : {young, old}) DropAfter(ino, 3600);
  Heartbeats(0s);
  planner_->RunPass();
  EXPECT_EQ(Rows(young)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(Rows(old)[1].first, ReplicaState::kOffloaded);
  (void)young_chunk;
  (void)old_chunk;
}

// after= counts from the file's last use: a file unchanged for two hours
// but opened for reading a minute ago (its atime, relatime) stays.
TEST_F(KeepLocalTest, DropAfterCountsFromTheLastReadOpen) {
  const int64_t now = WallNow().sec;
  const InodeId read = File("read", now - 7200, KeepLocal::kDrop).first;
  const InodeId unread = File("unread", now - 7200, KeepLocal::kDrop).first;
  for (InodeId ino : {read, unread}) DropAfter(ino, 3600);
  ReadOpen(read, now - 60);
  Heartbeats(0s);
  planner_->RunPass();
  EXPECT_EQ(Rows(read)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(Rows(unread)[1].first, ReplicaState::kOffloaded);
}

// keep-newest=N on a directory: its newest entries keep their copies (a
// checkpoint directory keeps the last N checkpoints local), the older ones
// are offloaded; raised, it recalls the ones it keeps again.
TEST_F(KeepLocalTest, KeepNewestKeepsTheLastCheckpointsLocal) {
  MakeNodeArgs d;
  d.parent = kRootInode;
  d.name = "ckpt";
  d.mode = S_IFDIR | 0755;
  auto made = store_->MakeNode(OpToken{}, d, testing::T(100));
  ASSERT_OK(made);
  const InodeId dir = made->attr.ino;
  const InodeId c1 = File("step1", 110, KeepLocal::kDrop, 1, dir).first;
  auto [c2, c2_chunk] = File("step2", 120, KeepLocal::kDrop, 1, dir);
  const InodeId c3 = File("step3", 130, KeepLocal::kDrop, 1, dir).first;
  Objective obj = Tiered(KeepLocal::kDrop);
  obj.keep_newest = 2;
  ASSERT_OK(store_->SetObjective(dir, obj, /*recursive=*/true));
  Heartbeats(0s);
  planner_->RunPass();
  EXPECT_EQ(Rows(c1)[1].first, ReplicaState::kOffloaded);
  EXPECT_EQ(Rows(c2)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(Rows(c3)[1].first, ReplicaState::kHealthy);
  // A new checkpoint: the oldest kept one goes.
  const InodeId c4 = File("step4", 140, KeepLocal::kDrop, 1, dir).first;
  planner_->RunPass();
  EXPECT_EQ(Rows(c2)[1].first, ReplicaState::kOffloaded);
  EXPECT_EQ(Rows(c3)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(Rows(c4)[1].first, ReplicaState::kHealthy);
  // Kept again (keep-newest=3): staged back.
  obj.keep_newest = 3;
  ASSERT_OK(store_->SetObjective(dir, obj, false));
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = TakeCopies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].object_key(), tier_->Key(c2_chunk, 1));
}

TEST_F(KeepLocalTest, KeepAgainRecallsWithoutAWriter) {
  Keep(KeepLocal::kDrop, file_);
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));
  Heartbeats(0s);
  planner_->RunPass();
  ASSERT_EQ(Rows(file_)[1].first, ReplicaState::kOffloaded);
  Keep(KeepLocal::kKeep, file_);
  planner_->RunPass();
  std::vector<pb::NodeCommand> copies = TakeCopies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].object_key(), tier_->Key(chunk_, 1));
}

// A file goes whole: the chunks that meet the need, then the rest of its
// file, and no chunk of the next file.
TEST_F(KeepLocalTest, PressureOffloadsWholeFiles) {
  auto [a, a0] = File("a", 105, KeepLocal::kPressure, 4);
  auto [b, b0] = File("b", 110, KeepLocal::kPressure, 4);
  auto [c, c0] = File("c", 130, KeepLocal::kPressure, 4);
  Heartbeats(0s);
  // 24.5 of 25 MiB used (98%): 4.5 MiB must go to reach 80%: all of a,
  // then b, whole once begun; c stays.
  ReportVolume(25 * kChunkBytes, kChunkBytes / 2, 140);
  planner_->RunPass();
  auto states = [&](InodeId ino) {
    std::vector<ReplicaState> out;
    auto layout = store_->GetLayout(ino, 0, 4);
    EXPECT_OK(layout);
    for (const ChunkLayout& l : *layout) out.push_back(l.replicas.front().state);
    return out;
  };
  const std::vector<ReplicaState> offloaded(4, ReplicaState::kOffloaded);
  const std::vector<ReplicaState> healthy(4, ReplicaState::kHealthy);
  EXPECT_EQ(states(a), offloaded);
  EXPECT_EQ(states(b), offloaded);
  EXPECT_EQ(states(c), healthy);
  EXPECT_EQ(planner_->Stats().pressure_offloads, 8u);
  (void)a0;
  (void)b0;
  (void)c0;
}

TEST_F(KeepLocalTest, PressureOffloadsTheLeastRecentlyChangedUntilTheLowWatermark) {
  Keep(KeepLocal::kPressure, file_);
  ASSERT_OK(store_->SetObjectVersion(chunk_, 1));  // file_ changed at 110
  auto [older, older_chunk] = File("older", 105, KeepLocal::kPressure);
  auto [newer, newer_chunk] = File("newer", 130, KeepLocal::kPressure);
  Heartbeats(0s);
  // 10 MiB, 85% full: below the high watermark (90%), nothing goes.
  ReportVolume(10 * kChunkBytes, 10 * kChunkBytes * 15 / 100, 140);
  planner_->RunPass();
  EXPECT_EQ(planner_->Stats().offloads, 0u);
  // 95% full: 1.5 MiB must go to reach 80%: the two least recently changed.
  ReportVolume(10 * kChunkBytes, 10 * kChunkBytes * 5 / 100, 141);
  planner_->RunPass();
  EXPECT_EQ(Rows(older)[1].first, ReplicaState::kOffloaded);
  EXPECT_EQ(Rows(file_)[1].first, ReplicaState::kOffloaded);
  EXPECT_EQ(Rows(newer)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(planner_->Stats().pressure_offloads, 2u);
  // The volume reports no change yet: what was offloaded counts as freed,
  // so the next pass takes nothing more.
  planner_->RunPass();
  EXPECT_EQ(Rows(newer)[1].first, ReplicaState::kHealthy);
  EXPECT_EQ(planner_->Stats().pressure_offloads, 2u);
  // A full volume does not touch keep-local=drop's or keep's files here,
  // nor recall the offloaded ones.
  EXPECT_TRUE(CopiesToNode2().empty());
}

// Pressure's order is by last use: a file changed long ago but opened for
// reading since (its atime) goes after one changed later and never read.
TEST_F(KeepLocalTest, PressureOffloadsTheLeastRecentlyUsed) {
  const InodeId read = File("read", 105, KeepLocal::kPressure).first;
  const InodeId unread = File("unread", 110, KeepLocal::kPressure).first;
  ReadOpen(read, 120);
  Heartbeats(0s);
  // 91% of 5 MiB: 0.55 MiB must go to reach 80%, one file.
  ReportVolume(5 * kChunkBytes, 5 * kChunkBytes * 9 / 100, 140);
  planner_->RunPass();
  EXPECT_EQ(Rows(unread)[1].first, ReplicaState::kOffloaded);
  EXPECT_EQ(Rows(read)[1].first, ReplicaState::kHealthy);
}

// Silence from before this meta watched (it was down, or stopped) does not
// make a node lost: a meta back after five minutes finds every node silent
// for five minutes, and must not re-create all their replicas at once.
TEST(NodeHealthTest, OnlySilenceWhileMetaWatchedMakesANodeLost) {
  NodeHealth health{3s, 10s};
  health.SeenAgo(NodeId(1), 600s);  // its stored heartbeat is ten minutes old
  EXPECT_EQ(health.Of(NodeId(1)), Health::kDown);
  EXPECT_FALSE(health.Lost(NodeId(1), 60s));  // watched for a moment only
  EXPECT_FALSE(health.Lost(NodeId(2), 60s));  // never seen either
  health.WatchingSince(NodeHealth::Clock::now() - 120s);
  EXPECT_TRUE(health.Lost(NodeId(1), 60s));
  EXPECT_TRUE(health.Lost(NodeId(2), 60s));
  EXPECT_FALSE(health.Lost(NodeId(1), 300s));
  health.Seen(NodeId(1));
  EXPECT_FALSE(health.Lost(NodeId(1), 60s));  // up
  health.SeenAgo(NodeId(1), 600s);
  health.WatchingSince(NodeHealth::Clock::now());  // meta was stopped: watching again
  EXPECT_FALSE(health.Lost(NodeId(1), 60s));
}

}  // namespace
}  // namespace t0fs::meta
