#include "client/decoded_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace t0fs::client {
namespace {

std::shared_ptr<const AlignedBuffer> Row(size_t size, char fill) {
  auto b = std::make_shared<AlignedBuffer>(size);
  std::memset(b->data(), fill, size);
  return b;
}

TEST(DecodedRows, FindsARowOnlyByItsChunkVersionAndRow) {
  DecodedRows rows(1 << 20);
  rows.Put(ChunkId(7), 3, 0, Row(4096, 'a'));
  auto found = rows.Find(ChunkId(7), 3, 0);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(static_cast<char>(found->data()[4095]), 'a');
  // Another version of the chunk (a rewrite encoded again), another row,
  // another chunk: not that row.
  EXPECT_EQ(rows.Find(ChunkId(7), 4, 0), nullptr);
  EXPECT_EQ(rows.Find(ChunkId(7), 3, 1), nullptr);
  EXPECT_EQ(rows.Find(ChunkId(8), 3, 0), nullptr);
}

TEST(DecodedRows, APutReplacesTheSameRow) {
  DecodedRows rows(1 << 20);
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'a'));
  rows.Put(ChunkId(1), 1, 0, Row(8192, 'b'));
  EXPECT_EQ(rows.rows(), 1u);
  EXPECT_EQ(rows.bytes(), 8192u);
  EXPECT_EQ(static_cast<char>(rows.Find(ChunkId(1), 1, 0)->data()[0]), 'b');
}

TEST(DecodedRows, TheLeastRecentlyUsedRowsGoPastTheCapacity) {
  DecodedRows rows(3 * 4096);
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'a'));
  rows.Put(ChunkId(1), 1, 1, Row(4096, 'b'));
  rows.Put(ChunkId(1), 1, 2, Row(4096, 'c'));
  ASSERT_NE(rows.Find(ChunkId(1), 1, 0), nullptr);  // row 0 used: row 1 is now the oldest
  rows.Put(ChunkId(1), 1, 3, Row(4096, 'd'));
  EXPECT_EQ(rows.rows(), 3u);
  EXPECT_EQ(rows.bytes(), 3u * 4096);
  EXPECT_EQ(rows.Find(ChunkId(1), 1, 1), nullptr);
  EXPECT_NE(rows.Find(ChunkId(1), 1, 0), nullptr);
  EXPECT_NE(rows.Find(ChunkId(1), 1, 2), nullptr);
  EXPECT_NE(rows.Find(ChunkId(1), 1, 3), nullptr);
}

TEST(DecodedRows, ARowLargerThanTheCapacityIsNotKept) {
  DecodedRows rows(4096);
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'a'));
  rows.Put(ChunkId(1), 1, 1, Row(8192, 'b'));
  EXPECT_EQ(rows.Find(ChunkId(1), 1, 1), nullptr);
  EXPECT_NE(rows.Find(ChunkId(1), 1, 0), nullptr);  // and it pushed nothing out
  rows.Put(ChunkId(1), 1, 2, nullptr);
  EXPECT_EQ(rows.rows(), 1u);
}

TEST(DecodedRows, AHeldRowOutlivesItsEviction) {
  DecodedRows rows(4096);
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'a'));
  auto held = rows.Find(ChunkId(1), 1, 0);
  rows.Put(ChunkId(1), 1, 1, Row(4096, 'b'));  // evicts row 0
  EXPECT_EQ(rows.Find(ChunkId(1), 1, 0), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(static_cast<char>(held->data()[100]), 'a');
}

TEST(DecodedRows, AllocateReusesAnEvictedBufferNobodyHolds) {
  DecodedRows rows(4096);
  auto first = rows.Allocate(4096);
  const std::byte* first_bytes = first->data();
  rows.Put(ChunkId(1), 1, 0, first);
  first.reset();
  auto held = rows.Allocate(4096);
  const std::byte* held_bytes = held->data();
  rows.Put(ChunkId(1), 1, 1, held);  // evicts row 0: its buffer is spare
  // Row 1 is evicted too, but a reader still holds it: never handed out.
  auto reader = rows.Find(ChunkId(1), 1, 1);
  rows.Put(ChunkId(1), 1, 2, std::make_shared<AlignedBuffer>(4096));  // evicts row 1
  held.reset();
  auto reused = rows.Allocate(4096);
  EXPECT_EQ(reused->data(), first_bytes);
  EXPECT_NE(reused->data(), held_bytes);
  EXPECT_GE(rows.Allocate(8192)->size(), 8192u);  // none big enough: a new one
}

TEST(DecodedRows, AClaimedRowIsDecodedOnceForItsReaders) {
  DecodedRows rows(1 << 20);
  ASSERT_EQ(rows.FindOrClaim(ChunkId(1), 1, 0), nullptr);  // ours to decode
  std::shared_ptr<const AlignedBuffer> theirs;
  std::thread reader([&] { theirs = rows.FindOrClaim(ChunkId(1), 1, 0); });
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'a'));
  reader.join();
  ASSERT_NE(theirs, nullptr);  // waited for the row, or found it after
  EXPECT_EQ(static_cast<char>(theirs->data()[0]), 'a');
  // Another row is not held up by that claim.
  EXPECT_EQ(rows.FindOrClaim(ChunkId(1), 1, 1), nullptr);
  rows.Release(ChunkId(1), 1, 1);
}

TEST(DecodedRows, AReleasedClaimPassesTheRowToTheNextReader) {
  DecodedRows rows(1 << 20);
  ASSERT_EQ(rows.FindOrClaim(ChunkId(1), 1, 0), nullptr);
  std::shared_ptr<const AlignedBuffer> theirs = Row(1, 'x');
  std::thread reader([&] { theirs = rows.FindOrClaim(ChunkId(1), 1, 0); });
  rows.Release(ChunkId(1), 1, 0);  // the decode failed
  reader.join();
  EXPECT_EQ(theirs, nullptr);  // the reader decodes it now, with the claim
  rows.Put(ChunkId(1), 1, 0, Row(4096, 'b'));
  EXPECT_NE(rows.Find(ChunkId(1), 1, 0), nullptr);
}

}  // namespace
}  // namespace t0fs::client
