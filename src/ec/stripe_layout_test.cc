#include "ec/stripe_layout.h"

#include <random>

#include <gtest/gtest.h>

#include "ec/erasure_code.h"

namespace t0fs::ec {
namespace {

// Where chunk byte `pos` lives, by the rule in the header, one byte at a time.
std::pair<uint32_t, uint64_t> Naive(uint32_t k, uint64_t unit, uint64_t pos) {
  const uint64_t unit_idx = pos / unit;
  return {static_cast<uint32_t>(unit_idx % k), unit_idx / k * unit + pos % unit};
}

TEST(StripeLayout, RejectsBadShapes) {
  EXPECT_EQ(StripeLayout::Make(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StripeLayout::Make(kMaxCells).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StripeLayout::Make(4, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StripeLayout::Make(4, 4096 + 512).status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(StripeLayout::Make(4).ok());
  EXPECT_EQ(StripeLayout::Make(4)->unit(), kDefaultUnit);
}

// Every byte of random ranges lands where the rule says, the pieces are in
// chunk order, cover the range exactly and never cross a unit (k > 1).
TEST(StripeLayout, MapMatchesTheRuleByteForByte) {
  std::mt19937_64 rng(7);
  for (uint32_t k : {1u, 2u, 3u, 4u, 6u, 10u}) {
    const uint64_t unit = 4096 * (1 + rng() % 3);
    Result<StripeLayout> layout = StripeLayout::Make(k, unit);
    ASSERT_TRUE(layout.ok());
    for (int round = 0; round < 50; ++round) {
      const uint64_t offset = rng() % (unit * k * 5);
      const uint64_t len = rng() % (unit * k * 3);
      std::vector<CellExtent> pieces = layout->Map(offset, len);
      uint64_t pos = offset;
      for (const CellExtent& piece : pieces) {
        ASSERT_EQ(piece.chunk_offset, pos);
        ASSERT_GT(piece.length, 0u);
        if (k > 1) {
          ASSERT_LE(piece.cell_offset % unit + piece.length, unit);
        }
        for (uint64_t i = 0; i < piece.length; i += 511) {
          auto [cell, at] = Naive(k, unit, pos + i);
          ASSERT_EQ(cell, piece.cell);
          ASSERT_EQ(at, piece.cell_offset + i);
        }
        pos += piece.length;
      }
      ASSERT_EQ(pos, offset + len) << "k " << k << " offset " << offset << " len " << len;
    }
  }
}

TEST(StripeLayout, MapOfOneCellIsOnePiece) {
  Result<StripeLayout> layout = StripeLayout::Make(1, 4096);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->Map(100, 100000), (std::vector<CellExtent>{{0, 100, 100000, 100}}));
  EXPECT_TRUE(layout->Map(5, 0).empty());
  // A range past 2^64 is cut there rather than wrapping around.
  std::vector<CellExtent> top = layout->Map(UINT64_MAX - 10, 100);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].length, 10u);
}

// Cell lengths: every byte of the chunk is counted once, in the cell the
// rule puts it in; parity cells are as long as cell 0.
TEST(StripeLayout, CellLengthsCountEachByteOnce) {
  for (uint32_t k : {1u, 3u, 4u}) {
    Result<StripeLayout> layout = StripeLayout::Make(k, 4096);
    ASSERT_TRUE(layout.ok());
    for (uint64_t chunk_len : {0ull, 1ull, 4095ull, 4096ull, 4097ull, 3 * 4096ull + 5,
                               4 * 4096ull, 9 * 4096ull + 100}) {
      std::vector<uint64_t> want(k, 0);
      for (uint64_t pos = 0; pos < chunk_len; ++pos) {
        auto [cell, at] = Naive(k, 4096, pos);
        want[cell] = std::max(want[cell], at + 1);
      }
      for (uint32_t cell = 0; cell < k; ++cell) {
        EXPECT_EQ(layout->DataCellLength(cell, chunk_len), want[cell])
            << "k " << k << " cell " << cell << " chunk " << chunk_len;
      }
      EXPECT_EQ(layout->ParityCellLength(chunk_len), want[0]);
      EXPECT_EQ(layout->DataCellLength(k, chunk_len), 0u);
    }
  }
}

}  // namespace
}  // namespace t0fs::ec
