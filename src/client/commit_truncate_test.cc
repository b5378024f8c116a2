// The commit room and the attribute overlay of open inodes, against a fake
// meta. (Truncation moves data on replicas: the cluster tests cover it.)
#include "client/commit_truncate.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace t0fs::client
