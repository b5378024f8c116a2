// The commit room and the attribute overlay of open inodes, against a fake
// meta. (Truncation moves data on replicas: the cluster tests cover it.)
#include "client/commit_truncate.h"

#include <gtest/gtest.h>

#include <map>

#include "client/fake_meta_test.h"
#include "client/meta_client.h"

namespace t0fs::client {
namespace {

using testing::FakeMeta;

constexpr InodeId kIno(7);

Attr FileAttr(uint64_t size) {
  Attr attr;
  attr.ino = kIno;
  attr.mode = 0100644;
  attr.size = size;
  attr.chunk_size = 1 << 20;
  return attr;
}

struct CommitTruncateTest : ::testing::Test {
  FakeMeta meta;
  // The data path's services, never reached by these tests.
  ClientOptions options;
  MetaClient unused_meta{options, "secret"};
  DataClient data{options, "secret", unused_meta};
  IoStats stats;
  LayoutCache layouts{meta, 4};
  ReplicaIo replicas{true, meta, data, layouts, stats};
  Passthrough passthrough{true, meta, layouts, replicas, stats};
  OpenFiles open{meta, Duration{std::chrono::hours(1)}};
  CommitTruncate commits{meta, data, replicas, open, passthrough};
};

TEST_F(CommitTruncateTest, UncommittedWritesShowInEveryAnswer) {
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(10), /*writable=*/true);
  {
    std::lock_guard lock(st->mu);
    st->size = 100;
    st->write_generation = 1;
    st->last_write = Timespec{1234, 5};
  }
  Attr seen = open.FromMeta(FileAttr(10));
  EXPECT_EQ(seen.size, 100u);
  EXPECT_EQ(seen.mtime.sec, 1234);
  // A file nobody here has open is meta's answer as it is.
  Attr other = FileAttr(10);
  other.ino = InodeId(8);
  EXPECT_EQ(open.WithOpenState(other).size, 10u);
  open.Forget(st);
  EXPECT_EQ(open.Find(kIno), nullptr);
}

TEST_F(CommitTruncateTest, AttrCacheAnswersOpenInodesUntilANamespaceChange) {
  meta.attrs[kIno] = FileAttr(10);
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(10), false);
  OpenFiles::NoteMetaAttr(*st, FileAttr(10));
  ASSERT_TRUE(open.GetAttr(kIno).ok());
  EXPECT_EQ(meta.getattr_calls, 0);
  open.ForgetMetaAttrs();
  ASSERT_TRUE(open.GetAttr(kIno).ok());
  EXPECT_EQ(meta.getattr_calls, 1);
  open.Forget(st);
  ASSERT_TRUE(open.GetAttr(kIno).ok());  // not open: meta every time
  ASSERT_TRUE(open.GetAttr(kIno).ok());
  EXPECT_EQ(meta.getattr_calls, 3);
}

TEST_F(CommitTruncateTest, NothingWrittenCommitsNothing) {
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(10), true);
  ASSERT_TRUE(commits.Commit(*st, HandleId(3), /*durable=*/false).ok());
  EXPECT_TRUE(meta.commits.empty());
  open.Forget(st);
}

TEST_F(CommitTruncateTest, CommitRecordsWhoTookTheWritesAndStalesTheRest) {
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(0), true);
  {
    std::lock_guard lock(st->mu);
    st->layout[0] = FakeMeta::Chunk(0, 10, kCapRead | kCapWrite);
    st->size = 4096;
    st->write_generation = 1;
    st->last_write = Timespec{99, 0};
    st->dirty_versions[ChunkId(10)] = 2;
    st->written_nodes[ChunkId(10)] = {NodeId(1)};  // node 2 missed a write
  }
  ASSERT_TRUE(commits.Commit(*st, HandleId(3), /*durable=*/true).ok());
  ASSERT_EQ(meta.commits.size(), 1u);
  const CommitRequest& sent = meta.commits.front();
  EXPECT_EQ(sent.handle, HandleId(3));
  EXPECT_EQ(sent.size, 4096u);
  EXPECT_TRUE(sent.durable);
  ASSERT_TRUE(sent.mtime.has_value());
  ASSERT_EQ(sent.written.size(), 1u);
  EXPECT_EQ(sent.written[0].chunk, ChunkId(10));
  EXPECT_EQ(sent.written[0].version, 2u);
  EXPECT_EQ(sent.written[0].nodes, std::vector<NodeId>{NodeId(1)});
  {
    std::lock_guard lock(st->mu);
    EXPECT_TRUE(st->dirty_versions.empty());
    EXPECT_EQ(st->committed_generation, 1u);
    EXPECT_EQ(st->committed_size, 4096u);
    EXPECT_EQ(st->layout[0].info.replicas[0].version, 2u);
    EXPECT_EQ(st->layout[0].info.replicas[1].state, ReplicaState::kStale);
  }
  // Committed: the next commit has nothing to say.
  ASSERT_TRUE(commits.Commit(*st, HandleId(3), true).ok());
  EXPECT_EQ(meta.commits.size(), 1u);
  open.Forget(st);
}

// A version meta recorded before its writes reached a node would make
// another client's reader find the node's file "stale" (and record every
// replica as written): a chunk whose writes are all on their way waits for
// the next commit, and a write landing during a commit keeps its chunk
// dirty for the next one, which names the nodes as they are then.
TEST_F(CommitTruncateTest, AChunkIsCommittedOnlyAfterItsWritesLanded) {
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(0), true);
  {
    std::lock_guard lock(st->mu);
    st->layout[0] = FakeMeta::Chunk(0, 10, kCapRead | kCapWrite);
    st->layout[1] = FakeMeta::Chunk(1, 11, kCapRead | kCapWrite);
    st->size = 4096;
    st->write_generation = 1;
    st->dirty_versions[ChunkId(10)] = 2;
    st->landed_writes[ChunkId(10)] = 1;
    st->dirty_versions[ChunkId(11)] = 1;
    st->landed_writes[ChunkId(11)] = 0;  // its first write is on its way
  }
  meta.during_commit = [&] {
    std::lock_guard lock(st->mu);
    st->landed_writes[ChunkId(10)]++;  // another write of chunk 10 lands meanwhile
    st->written_nodes[ChunkId(10)] = {NodeId(1)};
  };
  ASSERT_TRUE(commits.Commit(*st, HandleId(3), false).ok());
  meta.during_commit = nullptr;
  ASSERT_EQ(meta.commits.size(), 1u);
  ASSERT_EQ(meta.commits[0].written.size(), 1u);
  EXPECT_EQ(meta.commits[0].written[0].chunk, ChunkId(10));
  EXPECT_TRUE(meta.commits[0].written[0].nodes.empty());
  {
    std::lock_guard lock(st->mu);
    EXPECT_EQ(st->dirty_versions.count(ChunkId(10)), 1u);  // landed during the commit
    EXPECT_EQ(st->dirty_versions.count(ChunkId(11)), 1u);
    st->landed_writes[ChunkId(11)] = 1;  // chunk 11's write lands
  }
  ASSERT_TRUE(commits.Commit(*st, HandleId(3), false).ok());
  ASSERT_EQ(meta.commits.size(), 2u);
  std::map<ChunkId, std::vector<NodeId>> second;
  for (const WrittenChunk& w : meta.commits[1].written) second[w.chunk] = w.nodes;
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[ChunkId(10)], std::vector<NodeId>{NodeId(1)});  // as they are now
  EXPECT_TRUE(second.count(ChunkId(11)));
  {
    std::lock_guard lock(st->mu);
    EXPECT_TRUE(st->dirty_versions.empty());
    EXPECT_TRUE(st->landed_writes.empty());
  }
  open.Forget(st);
}

// Meta refuses a commit whose writes went to chunk files their nodes
// removed: the bytes are lost. Every File open then reports it once (as
// Linux's errseq), the pending state is gone, and later writes commit.
TEST_F(CommitTruncateTest, ARefusedCommitIsReportedOnceToEachFileAndWritesGoOn) {
  std::shared_ptr<InodeState> st = open.Acquire(FileAttr(0), true);
  const auto write = [&](uint64_t size, ChunkId chunk, uint64_t version) {
    std::lock_guard lock(st->mu);
    st->layout[0] = FakeMeta::Chunk(0, chunk.value(), kCapRead | kCapWrite);
    st->layout_known_below = 1;
    st->size = size;
    st->write_generation++;
    st->dirty_versions[chunk] = version;
    st->written_nodes[chunk] = {NodeId(1)};
    st->unsynced[chunk] = 0;
  };
  write(8192, ChunkId(10), 2);
  meta.refuse_commits = Status(StatusCode::kStale, "chunk 10: not committed");
  uint64_t first = 0, second = 0;  // two Files open before the loss
  EXPECT_EQ(commits.Commit(*st, HandleId(3), false, &first).code(), StatusCode::kStale);
  {
    std::lock_guard lock(st->mu);
    EXPECT_TRUE(st->dirty_versions.empty());
    EXPECT_TRUE(st->written_nodes.empty());
    EXPECT_TRUE(st->unsynced.empty());
    EXPECT_TRUE(st->layout.empty());
    EXPECT_EQ(st->layout_known_below, 0u);
    EXPECT_EQ(st->size, 0u);  // the lost bytes are not claimed
    EXPECT_EQ(st->committed_generation, st->write_generation);
  }
  const size_t sent = meta.commits.size();
  EXPECT_TRUE(commits.Commit(*st, HandleId(3), false, &first).ok());  // reported to it already
  EXPECT_EQ(commits.Commit(*st, HandleId(4), true, &second).code(), StatusCode::kStale);
  EXPECT_TRUE(commits.Commit(*st, HandleId(4), true, &second).ok());
  uint64_t later = 1;  // a File opened after the loss
  EXPECT_TRUE(commits.Commit(*st, HandleId(5), false, &later).ok());
  EXPECT_EQ(meta.commits.size(), sent);  // nothing left to commit

  // Written again (with a fresh layout): committed as usual.
  meta.refuse_commits.reset();
  write(4096, ChunkId(10), 2);
  EXPECT_TRUE(commits.Commit(*st, HandleId(4), false, &second).ok());
  ASSERT_EQ(meta.commits.size(), sent + 1);
  EXPECT_EQ(meta.commits.back().size, 4096u);
  ASSERT_EQ(meta.commits.back().written.size(), 1u);
  EXPECT_EQ(meta.commits.back().written[0].chunk, ChunkId(10));
  EXPECT_TRUE(commits.Commit(*st, HandleId(3), false, &first).ok());
  open.Forget(st);
}

}  // namespace
}  // namespace t0fs::client
