// The layout room's contract against a fake meta: which calls it makes and
// which capabilities it hands out.
#include "client/layout_cache.h"

#include <gtest/gtest.h>

#include "client/fake_meta_test.h"

namespace t0fs::client {
namespace {

using testing::FakeMeta;

struct LayoutCacheTest : ::testing::Test {
  FakeMeta meta;
  LayoutCache cache{meta, /*allocate_ahead=*/4};
  InodeState st;
  LayoutCacheTest() { st.ino = InodeId(7); }
};

TEST_F(LayoutCacheTest, CachedChunkIsAnsweredWithoutMeta) {
  meta.chunks = {{0, 10}, {1, 11}};
  ASSERT_TRUE(cache.ChunkFor(st, 0).ok());
  EXPECT_EQ(meta.layout_calls, 1);
  auto chunk = cache.ChunkFor(st, 1);
  ASSERT_TRUE(chunk.ok());
  ASSERT_TRUE(chunk->has_value());
  EXPECT_EQ((*chunk)->info.replicas.front().chunk, ChunkId(11));
  EXPECT_EQ(meta.layout_calls, 1);
}

TEST_F(LayoutCacheTest, HoleBelowTheFetchedWindowCostsNoCall) {
  meta.chunks = {{0, 10}, {5, 15}};
  ASSERT_TRUE(cache.ChunkFor(st, 0).ok());
  auto hole = cache.ChunkFor(st, 3);
  ASSERT_TRUE(hole.ok());
  EXPECT_FALSE(hole->has_value());
  EXPECT_EQ(meta.layout_calls, 1);
}

// Close-to-open: chunks past what an open reply covers were fetched before
// the open and may have changed since (moved, offloaded): fetched again,
// and their absence is no longer taken for a hole.
TEST_F(LayoutCacheTest, AnOpenForgetsChunksPastItsReply) {
  const uint64_t far = LayoutCache::kOpenWindow + 5;
  meta.chunks = {{0, 10}, {far, 20}, {far + 1, 21}};
  ASSERT_TRUE(cache.ChunkFor(st, far).ok());
  EXPECT_EQ(meta.layout_calls, 1);
  meta.chunks = {{0, 10}, {far, 30}};  // chunk `far` is another now; far + 1 is gone
  cache.OnOpen(st, {FakeMeta::Chunk(0, 10, kCapRead)}, /*truncated=*/false);
  auto chunk = cache.ChunkFor(st, far);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_EQ((*chunk)->info.replicas.front().chunk, ChunkId(30));
  EXPECT_EQ(meta.layout_calls, 2);
  auto gone = cache.ChunkFor(st, far + 1);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  const int calls = meta.layout_calls;
  auto below = cache.ChunkFor(st, 3);  // within the reply's window: a hole, no call
  ASSERT_TRUE(below.ok());
  EXPECT_FALSE(below->has_value());
  EXPECT_EQ(meta.layout_calls, calls);
}

TEST_F(LayoutCacheTest, ReadOnlyOpenLayoutNeverDowngradesAWriter) {
  meta.chunks = {{0, 10}};
  LayoutCache::NoteOpen(st, /*writable=*/true);
  // A read-only open of the same inode brings a read-only capability.
  cache.OnOpen(st, {FakeMeta::Chunk(0, 10, kCapRead)}, /*truncated=*/false);
  auto chunk = cache.ChunkFor(st, 0);
  ASSERT_TRUE(chunk.ok());
  ASSERT_TRUE(chunk->has_value());
  EXPECT_NE((*chunk)->cap.rights & kCapWrite, 0u);
  EXPECT_TRUE(meta.last_layout_write);
  EXPECT_EQ(meta.layout_calls, 1);
}

// Another client truncated the file: a refresh of the window drops the
// cached chunk meta no longer has, so a writer allocates a new one instead
// of writing the old (a capability for a chunk that is gone).
TEST_F(LayoutCacheTest, ARefreshDropsChunksMetaNoLongerHas) {
  meta.chunks = {{0, 10}, {1, 11}};
  ASSERT_TRUE(cache.ChunkFor(st, 1).ok());
  meta.chunks = {{0, 10}};
  ASSERT_TRUE(cache.Refresh(st, 0, LayoutCache::kFetchWindow).ok());
  auto gone = cache.ChunkFor(st, 1);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  auto fresh = cache.Allocate(st, 1, /*streaming=*/false);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->info.replicas.front().chunk, ChunkId(11));
}

// A read-only open's layout arriving after the writer fetched its own
// keeps the writer's write capability for the same chunk.
TEST_F(LayoutCacheTest, AReadOnlyLayoutKeepsAWritersCapability) {
  meta.chunks = {{0, 10}};
  LayoutCache::NoteOpen(st, /*writable=*/true);
  ASSERT_TRUE(cache.ChunkFor(st, 0).ok());
  EXPECT_EQ(meta.layout_calls, 1);
  cache.OnOpen(st, {FakeMeta::Chunk(0, 10, kCapRead)}, /*truncated=*/false);
  auto chunk = cache.ChunkFor(st, 0);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_NE((*chunk)->cap.rights & kCapWrite, 0u);
  EXPECT_EQ(meta.layout_calls, 1);
}

TEST_F(LayoutCacheTest, FirstWriterDropsReadOnlyCapabilities) {
  meta.chunks = {{0, 10}};
  ASSERT_TRUE(cache.ChunkFor(st, 0).ok());
  EXPECT_FALSE(meta.last_layout_write);
  LayoutCache::NoteOpen(st, /*writable=*/true);
  auto chunk = cache.ChunkFor(st, 0);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_NE((*chunk)->cap.rights & kCapWrite, 0u);
  EXPECT_EQ(meta.layout_calls, 2);
}

TEST_F(LayoutCacheTest, CapabilityNearExpiryIsRefreshed) {
  meta.chunks = {{0, 10}};
  cache.OnOpen(st, {FakeMeta::Chunk(0, 10, kCapRead, WallMillis() + LayoutCache::kCapMarginMs / 2)}, false);
  auto chunk = cache.ChunkFor(st, 0);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_EQ(meta.layout_calls, 1);
  EXPECT_GT((*chunk)->cap.expiry_ms, WallMillis() + LayoutCache::kCapMarginMs);
}

TEST_F(LayoutCacheTest, StreamingWriterAllocatesAhead) {
  auto chunk = cache.Allocate(st, 0, /*streaming=*/true);
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(meta.last_allocate, (std::vector<uint64_t>{0, 1, 2, 3}));
  // The chunks allocated ahead are known: no more calls for them.
  const int calls = meta.layout_calls;
  ASSERT_TRUE(cache.Allocate(st, 2, true).ok());
  EXPECT_EQ(meta.layout_calls, calls);
  EXPECT_EQ(meta.last_allocate, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST_F(LayoutCacheTest, SmallWriteAllocatesOnlyItsChunk) {
  ASSERT_TRUE(cache.Allocate(st, 9, /*streaming=*/false).ok());
  EXPECT_EQ(meta.last_allocate, (std::vector<uint64_t>{9}));
}

TEST_F(LayoutCacheTest, OpenDropsChunksMetaNoLongerHas) {
  meta.chunks = {{0, 10}, {1, 11}};
  ASSERT_TRUE(cache.ChunkFor(st, 1).ok());
  // Another client truncated the file to chunk 0 and closed: close-to-open.
  meta.chunks.erase(1);
  cache.OnOpen(st, {FakeMeta::Chunk(0, 10, kCapRead)}, false);
  const int calls = meta.layout_calls;
  auto gone = cache.ChunkFor(st, 1);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  EXPECT_EQ(meta.layout_calls, calls);
}

TEST_F(LayoutCacheTest, MergeKeepsVersionsThisSessionWrote) {
  meta.chunks = {{0, 10}};
  ASSERT_TRUE(cache.ChunkFor(st, 0).ok());
  {
    std::lock_guard lock(st.mu);
    LayoutCache::NoteCommitted(st, ChunkId(10), 5, {NodeId(1)});
  }
  ASSERT_TRUE(cache.Refresh(st, 0, 1).ok());  // meta still says version 1
  auto chunk = cache.ChunkFor(st, 0);
  ASSERT_TRUE(chunk.ok() && chunk->has_value());
  EXPECT_EQ((*chunk)->info.replicas[0].version, 5u);
  // Node 2 missed the writes: stale until meta's refresh says otherwise.
  {
    std::lock_guard lock(st.mu);
    LayoutCache::NoteCommitted(st, ChunkId(10), 6, {NodeId(1)});
    EXPECT_EQ(st.layout[0].info.replicas[1].state, ReplicaState::kStale);
  }
}

}  // namespace
}  // namespace t0fs::client
