// The layout room's contract against a fake meta: which calls it makes and
// which capabilities it hands out.
#include "client/layout_cache.h"

#include <gtest/gtest.h>

#include <map>

namespace t0fs::client {
namespace {

constexpr uint64_t kHour = 3600 * 1000;

// Meta with a fixed set of allocated chunks (index → chunk id). Counts the
// calls and signs capabilities with write rights when asked for them.
class FakeMeta final : public MetaApi {
 public:
  std::map<uint64_t, uint64_t> chunks;  // allocated: index → chunk id
  uint64_t next_chunk = 100;
  int layout_calls = 0;
  bool last_layout_write = false;
  std::vector<uint64_t> last_allocate;

  NodeId local_node() const override { return NodeId(1); }
  Result<Attr> GetAttr(InodeId) override { return Status(StatusCode::kInternal, "unused"); }
  Result<std::vector<CachedChunk>> GetLayout(InodeId, uint64_t first, uint64_t count, bool write) override {
    layout_calls++;
    last_layout_write = write;
    std::vector<CachedChunk> out;
    for (auto it = chunks.lower_bound(first); it != chunks.end() && it->first < first + count; ++it) {
      out.push_back(Chunk(it->first, it->second, write ? kCapRead | kCapWrite : kCapRead));
    }
    return out;
  }
  Result<std::vector<CachedChunk>> Allocate(InodeId, const std::vector<uint64_t>& indices) override {
    last_allocate = indices;
    std::vector<CachedChunk> out;
    for (uint64_t index : indices) {
      auto [it, added] = chunks.emplace(index, next_chunk);
      if (added) next_chunk++;
      out.push_back(Chunk(index, it->second, kCapRead | kCapWrite));
    }
    return out;
  }
  Result<Attr> Commit(const CommitRequest&) override { return Status(StatusCode::kInternal, "unused"); }
  Result<Attr> Truncate(InodeId, uint64_t, uint64_t) override { return Status(StatusCode::kInternal, "unused"); }
  Status ReportReplica(const ReplicaInfo&, ReplicaProblem, const Status&) override { return Status::Ok(); }

  static CachedChunk Chunk(uint64_t index, uint64_t id, uint32_t rights, uint64_t expiry = WallMillis() + kHour) {
    CachedChunk c;
    c.info.index = index;
    c.info.replicas.push_back(ReplicaInfo{NodeId(1), VolumeId(1), ChunkId(id), 1, true, ReplicaState::kHealthy});
    c.info.replicas.push_back(ReplicaInfo{NodeId(2), VolumeId(2), ChunkId(id), 1, false, ReplicaState::kHealthy});
    c.cap.rights = rights;
    c.cap.expiry_ms = expiry;
    return c;
  }
};

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
