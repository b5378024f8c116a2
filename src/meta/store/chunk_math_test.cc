// The layout arithmetic of chunk_math.h.
#include "meta/store/chunk_math.h"

#include <gtest/gtest.h>

#include <limits>

namespace t0fs::meta {
namespace {

TEST(ChunkMath, ChunksCovering) {
  EXPECT_EQ(ChunksCovering(0, 100), 0u);
  EXPECT_EQ(ChunksCovering(1, 100), 1u);
  EXPECT_EQ(ChunksCovering(100, 100), 1u);
  EXPECT_EQ(ChunksCovering(101, 100), 2u);
  EXPECT_EQ(ChunksCovering(500, 0), 0u);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(ChunksCovering(max, 1), max);  // no overflow
  EXPECT_EQ(ChunksCovering(max, uint64_t{1} << 32), uint64_t{1} << 32);
}

TEST(ChunkMath, TruncateKeepsWhatTheSmallerSizeCovers) {
  // Shrink: the chunks the new size covers.
  EXPECT_EQ(ChunksKeptByTruncate(1000, 250, 100, 0), 3u);
  EXPECT_EQ(ChunksKeptByTruncate(1000, 200, 100, 0), 2u);
  EXPECT_EQ(ChunksKeptByTruncate(1000, 0, 100, 0), 0u);
  // Grow: only what the old size covered (data past the old end was never
  // committed and is discarded).
  EXPECT_EQ(ChunksKeptByTruncate(150, 1000, 100, 0), 2u);
  EXPECT_EQ(ChunksKeptByTruncate(0, 1000, 100, 0), 0u);
  // Same size: chunks past the end go, the covered ones stay.
  EXPECT_EQ(ChunksKeptByTruncate(300, 300, 100, 0), 3u);
}

TEST(ChunkMath, TruncateKeepsTheChunksTheClientResized) {
  // Extending: the client zero-filled chunks up to the new size.
  EXPECT_EQ(ChunksKeptByTruncate(150, 1000, 100, 10), 10u);
  // ... but never more than the new size reaches.
  EXPECT_EQ(ChunksKeptByTruncate(150, 1000, 100, 50), 10u);
  // Chunk 0 as a passthrough backing file stays even at size 0.
  EXPECT_EQ(ChunksKeptByTruncate(1000, 0, 100, 1), 1u);
  EXPECT_EQ(ChunksKeptByTruncate(1000, 0, 100, 5), 1u);
  // keep_chunks below what the sizes cover changes nothing.
  EXPECT_EQ(ChunksKeptByTruncate(1000, 500, 100, 2), 5u);
}

}  // namespace
}  // namespace t0fs::meta
