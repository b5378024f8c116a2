#include "data/object_sums.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/chunk_file.h"

namespace t0fs::data {
namespace {

std::vector<std::byte> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// The checksums of `bytes` as an uploader builds them: in pieces of whole
// blocks, the last one short.
std::string SumsOf(const std::vector<std::byte>& bytes, ChunkId chunk, uint64_t version) {
  ObjectSums sums;
  const size_t piece = 3 * kChunkBlockSize;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    sums.Add(std::span(bytes).subspan(at, std::min(piece, bytes.size() - at)));
  }
  return sums.Encode(chunk, version);
}

TEST(ObjectSums, HeaderNamesTheChunkAndVersion) {
  const auto bytes = RandomBytes(10 * kChunkBlockSize + 123, 1);
  const std::string sums = SumsOf(bytes, ChunkId(7), 3);
  EXPECT_EQ(sums.size(), kSumsHeaderSize + 4 * 11);
  EXPECT_TRUE(CheckSumsHeader(sums, ChunkId(7), 3).ok());
  EXPECT_EQ(CheckSumsHeader(sums, ChunkId(8), 3).code(), StatusCode::kCorruption);
  EXPECT_EQ(CheckSumsHeader(sums, ChunkId(7), 4).code(), StatusCode::kCorruption);
  EXPECT_EQ(CheckSumsHeader(sums.substr(0, 10), ChunkId(7), 3).code(), StatusCode::kCorruption);
  std::string other = sums;
  other[0] = 'x';
  EXPECT_EQ(CheckSumsHeader(other, ChunkId(7), 3).code(), StatusCode::kCorruption);
}

TEST(ObjectSums, AnyRangeOfWholeBlocksVerifies) {
  const auto bytes = RandomBytes(10 * kChunkBlockSize + 123, 2);
  const std::string sums = SumsOf(bytes, ChunkId(7), 3);
  for (uint64_t first : {0, 1, 9, 10}) {
    const auto range = std::span(bytes).subspan(first * kChunkBlockSize);
    EXPECT_TRUE(VerifyObjectBlocks(first, range, SumsFrom(sums, first), "x").ok()) << first;
    // The same bytes read short (the object's end cut in a GET) too.
    EXPECT_TRUE(VerifyObjectBlocks(first,
                                   range.first(std::min<size_t>(range.size(), kChunkBlockSize)),
                                   SumsFrom(sums, first), "x")
                    .ok())
        << first;
  }
}

TEST(ObjectSums, AChangedByteFailsNamingItsBlock) {
  auto bytes = RandomBytes(6 * kChunkBlockSize + 5, 3);
  const std::string sums = SumsOf(bytes, ChunkId(7), 3);
  bytes[4 * kChunkBlockSize + 17] ^= std::byte{1};
  Status st = VerifyObjectBlocks(2, std::span(bytes).subspan(2 * kChunkBlockSize),
                                 SumsFrom(sums, 2), "obj");
  EXPECT_EQ(st.code(), StatusCode::kDataChecksum);
  EXPECT_NE(st.ToString().find("offset 16384"), std::string::npos) << st.ToString();
  // Bytes appended past what was uploaded fail too (the sums say zeros).
  auto longer = RandomBytes(2 * kChunkBlockSize, 4);
  const std::string short_sums =
      SumsOf(std::vector(longer.begin(), longer.begin() + kChunkBlockSize), ChunkId(7), 3);
  EXPECT_EQ(VerifyObjectBlocks(0, longer, SumsFrom(short_sums, 0), "obj").code(),
            StatusCode::kDataChecksum);
  // ... unless they are zeros (a hole reads as zeros).
  std::fill(longer.begin() + kChunkBlockSize, longer.end(), std::byte{0});
  EXPECT_TRUE(VerifyObjectBlocks(0, longer, SumsFrom(short_sums, 0), "obj").ok());
}

}  // namespace
}  // namespace t0fs::data
