#include "ec/rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "ec/stripe_layout.h"

namespace t0fs::ec {
namespace {

using Bytes = std::vector<std::byte>;

Bytes Random(size_t n, std::mt19937_64& rng) {
  Bytes out(n);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Data cell j of a chunk by the rule of docs/formats/ec.md, computed
// directly: unit u goes to cell u % k.
Bytes DataCellByRule(const Bytes& chunk, uint32_t k, uint64_t unit, uint32_t j) {
  Bytes out;
  for (uint64_t u = j; u * unit < chunk.size(); u += k) {
    const uint64_t end = std::min<uint64_t>(chunk.size(), (u + 1) * unit);
    out.insert(out.end(), chunk.begin() + u * unit, chunk.begin() + end);
  }
  return out;
}

// A chunk cut into cells row by row and put back together from every choice
// of m lost cells: data cells follow the rule, cell lengths StripeLayout's,
// and the chunk comes back byte for byte.
TEST(EcRows, CutAndAssembleEveryShape) {
  std::mt19937_64 rng(20261204);
  const uint64_t unit = 4096;
  for (auto [k, m] : {std::pair{2u, 1u}, {3u, 2u}, {4u, 2u}}) {
    auto code = ErasureCode::Make(k, m);
    ASSERT_TRUE(code.ok());
    auto layout = StripeLayout::Make(k, unit);
    ASSERT_TRUE(layout.ok());
    for (uint64_t length : {uint64_t{0}, uint64_t{1}, unit - 1, unit, k * unit, k * unit + 5,
                            3 * k * unit + unit + 17}) {
      SCOPED_TRACE(testing::Message() << k << "+" << m << " length " << length);
      const Bytes chunk = Random(length, rng);
      // Cut: each cell's bytes, appended row by row as an encode sends them.
      std::vector<Bytes> stored(k + m);
      Bytes cells((k + m) * unit);
      const uint64_t rows = Rows(length, k, unit);
      for (uint64_t r = 0; r < rows; ++r) {
        const uint64_t n = RowBytes(length, k, unit, r);
        ASSERT_TRUE(EncodeRow(*code, unit, std::span(chunk).subspan(r * k * unit, n), cells).ok());
        for (uint32_t i = 0; i < k + m; ++i) {
          const uint64_t cell_bytes = CellRowBytes(n, k, unit, i);
          stored[i].insert(stored[i].end(), cells.begin() + i * unit,
                           cells.begin() + i * unit + cell_bytes);
        }
      }
      for (uint32_t j = 0; j < k; ++j) {
        EXPECT_EQ(stored[j], DataCellByRule(chunk, k, unit, j)) << "cell " << j;
        EXPECT_EQ(stored[j].size(), layout->DataCellLength(j, length)) << "cell " << j;
      }
      for (uint32_t i = k; i < k + m; ++i) {
        EXPECT_EQ(stored[i].size(), layout->ParityCellLength(length)) << "cell " << i;
      }
      // Assemble from every set of m lost cells.
      std::vector<bool> lost(k + m, false);
      std::fill(lost.end() - m, lost.end(), true);
      do {
        std::vector<uint32_t> missing;
        for (uint32_t i = 0; i < k + m; ++i) {
          if (lost[i]) missing.push_back(i);
        }
        Bytes back(length);
        for (uint64_t r = 0; r < rows; ++r) {
          const uint64_t n = RowBytes(length, k, unit, r);
          std::fill(cells.begin(), cells.end(), std::byte{0xee});  // lost cells hold junk
          for (uint32_t i = 0; i < k + m; ++i) {
            if (lost[i]) continue;
            const uint64_t cell_bytes = CellRowBytes(n, k, unit, i);
            std::copy_n(stored[i].begin() + r * unit, cell_bytes, cells.begin() + i * unit);
            std::fill(cells.begin() + i * unit + cell_bytes, cells.begin() + (i + 1) * unit,
                      std::byte{0});
          }
          ASSERT_TRUE(
              DecodeRow(*code, unit, cells, missing, std::span(back).subspan(r * k * unit, n))
                  .ok());
        }
        EXPECT_EQ(back, chunk) << "lost cells " << ::testing::PrintToString(missing);
      } while (std::next_permutation(lost.begin(), lost.end()));
    }
  }
}

TEST(EcRows, RowShapesThatDoNotFitAreRefused) {
  auto code = ErasureCode::Make(2, 1);
  ASSERT_TRUE(code.ok());
  Bytes row(3 * 4096), cells(3 * 4096);
  EXPECT_FALSE(EncodeRow(*code, 4096, row, cells).ok());  // a row longer than k units
  Bytes small(2 * 4096);
  EXPECT_FALSE(EncodeRow(*code, 4096, std::span(row).first(4096), small).ok());
  const uint32_t too_many[] = {0, 1};
  EXPECT_FALSE(DecodeRow(*code, 4096, cells, too_many, std::span(row).first(4096)).ok());
}

}  // namespace
}  // namespace t0fs::ec
