// The frame codec and a reader's read-ahead (frame.h).
#include "rpc/frame.h"

#include <gtest/gtest.h>

#include <span>

namespace t0fs::rpc {
namespace {

// A reader's read-ahead: taken in order across receives, room made at the
// front again once taken, and what follows a frame kept for the next one.
TEST(Frame, ReadAheadHandsOutBytesInOrder) {
  ReadAhead ahead;
  EXPECT_EQ(ahead.size(), 0u);
  std::byte out[ReadAhead::kSize];
  EXPECT_EQ(ahead.Take(out, 10), 0u);
  auto fill = [&](size_t n, int first) {
    std::span<std::byte> room = ahead.Room();
    ASSERT_GE(room.size(), n);
    for (size_t i = 0; i < n; ++i) room[i] = std::byte(first + i);
    ahead.Added(n);
  };
  fill(40, 0);  // a head and part of what follows it
  ASSERT_EQ(ahead.Take(out, kFrameHeaderSize), kFrameHeaderSize);
  EXPECT_EQ(out[31], std::byte(31));
  fill(20, 40);  // the rest comes in a second receive
  EXPECT_EQ(ahead.size(), 28u);
  EXPECT_EQ(ahead.Room().size(), ReadAhead::kSize - 28);  // moved to the front
  ASSERT_EQ(ahead.Take(out, 100), 28u);                   // no more than there is
  for (size_t i = 0; i < 28; ++i) EXPECT_EQ(out[i], std::byte(32 + i)) << i;
  EXPECT_EQ(ahead.size(), 0u);
  EXPECT_EQ(ahead.Room().size(), ReadAhead::kSize);
  fill(ReadAhead::kSize, 0);
  EXPECT_TRUE(ahead.Room().empty());
  EXPECT_EQ(ahead.Take(out, ReadAhead::kSize), ReadAhead::kSize);
}

TEST(Frame, RejectsBadMagicFlagsAndLengths) {
  FrameLimits limits{100, 200};
  std::byte head[kFrameHeaderSize];
  EncodeFrameHeader(FrameHeader{Method::kLookup, 0, 9, 0, 100, 200}, head);
  FrameHeader h;
  ASSERT_TRUE(
      DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, 32), limits, &h).ok());
  EXPECT_EQ(h.request_id, 9u);
  EncodeFrameHeader(FrameHeader{Method::kLookup, 0, 9, 0, 101, 0}, head);
  EXPECT_EQ(
      DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, 32), limits, &h).code(),
      StatusCode::kRpcTooLarge);
  EncodeFrameHeader(FrameHeader{Method::kLookup, 4, 9, 0, 1, 0}, head);
  EXPECT_EQ(
      DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, 32), limits, &h).code(),
      StatusCode::kRpcMalformed);
  head[0] = std::byte{0};
  EXPECT_EQ(
      DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, 32), limits, &h).code(),
      StatusCode::kRpcMalformed);
}

}  // namespace
}  // namespace t0fs::rpc
