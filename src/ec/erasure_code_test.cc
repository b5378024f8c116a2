#include "ec/erasure_code.h"

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

namespace t0fs::ec {
namespace {

// The random data's seed: EC_TEST_SEED replays a run; printed on failure.
uint32_t Seed() {
  static const uint32_t seed = [] {
    const char* env = std::getenv("EC_TEST_SEED");
    return env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10))
                          : std::random_device{}();
  }();
  return seed;
}

std::string Replay() { return fmt::format("replay: EC_TEST_SEED={}", Seed()); }

// GF(2^8) with the polynomial 0x11d, written out bit by bit: the reference
// the ISA-L code must agree with, so that the parity format cannot change
// under us with a library update.
uint8_t GfMul(uint8_t a, uint8_t b) {
  uint8_t product = 0;
  while (b != 0) {
    if ((b & 1) != 0) product ^= a;
    const bool carry = (a & 0x80) != 0;
    a = static_cast<uint8_t>(a << 1);
    if (carry) a ^= 0x1d;
    b >>= 1;
  }
  return product;
}

uint8_t GfInv(uint8_t a) {
  for (int x = 1; x < 256; ++x) {
    if (GfMul(a, static_cast<uint8_t>(x)) == 1) return static_cast<uint8_t>(x);
  }
  return 0;
}

using Cell = std::vector<std::byte>;

// k data cells of random bytes and m parity cells of garbage.
std::vector<Cell> RandomCells(uint32_t k, uint32_t m, size_t len, std::mt19937& rng) {
  std::vector<Cell> cells(k + m, Cell(len));
  for (Cell& cell : cells) {
    for (std::byte& b : cell) b = static_cast<std::byte>(rng());
  }
  return cells;
}

void Encode(const ErasureCode& code, std::vector<Cell>& cells) {
  std::vector<std::span<const std::byte>> data(cells.begin(), cells.begin() + code.k());
  std::vector<std::span<std::byte>> parity(cells.begin() + code.k(), cells.end());
  ASSERT_TRUE(code.Encode(data, parity).ok());
}

Status Rebuild(const ErasureCode& code, std::vector<Cell>& cells, std::vector<uint32_t> missing) {
  std::vector<std::span<std::byte>> spans(cells.begin(), cells.end());
  return code.Rebuild(spans, missing);
}

bool Consistent(const ErasureCode& code, const std::vector<Cell>& cells) {
  std::vector<std::span<const std::byte>> spans(cells.begin(), cells.end());
  Result<bool> r = code.Consistent(spans);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && *r;
}

// Every subset of {0..n-1} with 1..max members.
std::vector<std::vector<uint32_t>> LossPatterns(uint32_t n, uint32_t max) {
  std::vector<std::vector<uint32_t>> out;
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    if (static_cast<uint32_t>(__builtin_popcount(mask)) > max) continue;
    std::vector<uint32_t> lost;
    for (uint32_t cell = 0; cell < n; ++cell) {
      if ((mask & (1u << cell)) != 0) lost.push_back(cell);
    }
    out.push_back(std::move(lost));
  }
  return out;
}

TEST(ErasureCode, RejectsImpossibleShapes) {
  for (auto [k, m] : {std::pair{0u, 1u}, {1u, 0u}, {0u, 0u}, {31u, 2u}, {kMaxCells, 1u},
                      {1u, kMaxCells}, {0xffffffffu, 2u}}) {
    Result<ErasureCode> code = ErasureCode::Make(k, m);
    ASSERT_FALSE(code.ok()) << k << "+" << m;
    EXPECT_EQ(code.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(ErasureCode::Make(1, 1).ok());
  EXPECT_TRUE(ErasureCode::Make(kMaxCells - 4, 4).ok());
}

// The parity bytes are those of the documented Cauchy generator over
// GF(2^8)/0x11d, computed here without ISA-L.
TEST(ErasureCode, ParityIsTheDocumentedCauchyCode) {
  std::mt19937 rng(Seed());
  for (auto [k, m] : {std::pair{2u, 1u}, {4u, 2u}, {6u, 3u}, {10u, 4u}}) {
    Result<ErasureCode> code = ErasureCode::Make(k, m);
    ASSERT_TRUE(code.ok());
    std::vector<Cell> cells = RandomCells(k, m, 257, rng);
    Encode(*code, cells);
    for (uint32_t p = 0; p < m; ++p) {
      for (size_t byte = 0; byte < cells[0].size(); ++byte) {
        uint8_t want = 0;
        for (uint32_t j = 0; j < k; ++j) {
          want ^= GfMul(GfInv(static_cast<uint8_t>((k + p) ^ j)),
                        std::to_integer<uint8_t>(cells[j][byte]));
        }
        ASSERT_EQ(std::to_integer<uint8_t>(cells[k + p][byte]), want)
            << k << "+" << m << " parity " << p << " byte " << byte << "; " << Replay();
      }
    }
  }
}

// Every pattern of up to m lost cells, for the shapes objectives use, at
// lengths around ISA-L's vector widths: the rebuilt cells equal the
// originals byte for byte, and a rebuild leaves the survivors alone.
TEST(ErasureCode, RebuildsEveryPatternOfUpToMLostCells) {
  std::mt19937 rng(Seed());
  for (auto [k, m] : {std::pair{2u, 1u}, {2u, 2u}, {3u, 2u}, {4u, 2u}, {6u, 3u}, {8u, 4u}}) {
    Result<ErasureCode> code = ErasureCode::Make(k, m);
    ASSERT_TRUE(code.ok());
    for (size_t len : {size_t{1}, size_t{31}, size_t{64}, size_t{4096 + 13}}) {
      std::vector<Cell> original = RandomCells(k, m, len, rng);
      Encode(*code, original);
      ASSERT_TRUE(Consistent(*code, original));
      for (const std::vector<uint32_t>& lost : LossPatterns(k + m, m)) {
        std::vector<Cell> cells = original;
        for (uint32_t cell : lost) {
          for (std::byte& b : cells[cell]) b = static_cast<std::byte>(rng());
        }
        ASSERT_TRUE(Rebuild(*code, cells, lost).ok());
        ASSERT_EQ(cells, original) << k << "+" << m << " len " << len << " lost "
                                   << fmt::format("{}", fmt::join(lost, ",")) << "; " << Replay();
      }
    }
  }
}

TEST(ErasureCode, RefusesMoreLossThanItCanRebuildAndWritesNothing) {
  std::mt19937 rng(Seed());
  Result<ErasureCode> code = ErasureCode::Make(4, 2);
  ASSERT_TRUE(code.ok());
  std::vector<Cell> cells = RandomCells(4, 2, 100, rng);
  Encode(*code, cells);
  const std::vector<Cell> before = cells;
  for (const std::vector<uint32_t>& bad : std::vector<std::vector<uint32_t>>{
           {0, 1, 2}, {6}, {1, 1}, {0, 99}}) {
    Status st = Rebuild(*code, cells, bad);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << fmt::format("{}", fmt::join(bad, ","));
    EXPECT_EQ(cells, before);
  }
  EXPECT_TRUE(Rebuild(*code, cells, {}).ok());
  EXPECT_EQ(cells, before);
}

TEST(ErasureCode, RefusesCellsOfTheWrongNumberOrLength) {
  Result<ErasureCode> code = ErasureCode::Make(2, 1);
  ASSERT_TRUE(code.ok());
  Cell a(8), b(8), c(9), p(8);
  std::vector<std::span<const std::byte>> two{a, b}, uneven{a, c}, one{a};
  std::vector<std::span<std::byte>> parity{p}, no_parity{};
  EXPECT_EQ(code->Encode(uneven, parity).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(code->Encode(one, parity).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(code->Encode(two, no_parity).code(), StatusCode::kInvalidArgument);
  Cell short_parity(7);
  std::vector<std::span<std::byte>> short_parities{short_parity};
  EXPECT_EQ(code->Encode(two, short_parities).code(), StatusCode::kInvalidArgument);
  std::vector<std::span<std::byte>> three{a, c, p};
  EXPECT_EQ(code->Rebuild(three, std::vector<uint32_t>{0}).code(), StatusCode::kInvalidArgument);
  std::vector<std::span<const std::byte>> verify_two{a, b};
  EXPECT_EQ(code->Consistent(verify_two).status().code(), StatusCode::kInvalidArgument);
  // Empty cells are a valid (empty) stripe.
  Cell e0, e1, e2;
  std::vector<std::span<const std::byte>> empty{e0, e1};
  std::vector<std::span<std::byte>> empty_parity{e2};
  EXPECT_TRUE(code->Encode(empty, empty_parity).ok());
}

// Scrub's check: any changed byte in any cell, data or parity, is seen;
// cells larger than the verification piece are checked to their end.
TEST(ErasureCode, ConsistentSeesAnyChangedByte) {
  std::mt19937 rng(Seed());
  Result<ErasureCode> code = ErasureCode::Make(3, 2);
  ASSERT_TRUE(code.ok());
  const size_t len = (size_t{256} << 10) * 2 + 4096;  // three verification pieces
  std::vector<Cell> cells = RandomCells(3, 2, len, rng);
  Encode(*code, cells);
  ASSERT_TRUE(Consistent(*code, cells));
  for (uint32_t cell = 0; cell < 5; ++cell) {
    for (size_t byte : {size_t{0}, len / 2, len - 1}) {
      cells[cell][byte] ^= std::byte{0x40};
      EXPECT_FALSE(Consistent(*code, cells)) << "cell " << cell << " byte " << byte;
      cells[cell][byte] ^= std::byte{0x40};
    }
  }
  EXPECT_TRUE(Consistent(*code, cells));
}

// The code is linear: parity(a xor b) = parity(a) xor parity(b). A rewrite
// of part of a stripe can update parity from the difference alone.
TEST(ErasureCode, ParityIsLinear) {
  std::mt19937 rng(Seed());
  Result<ErasureCode> code = ErasureCode::Make(4, 2);
  ASSERT_TRUE(code.ok());
  std::vector<Cell> a = RandomCells(4, 2, 333, rng), b = RandomCells(4, 2, 333, rng);
  Encode(*code, a);
  Encode(*code, b);
  std::vector<Cell> sum = a;
  for (size_t cell = 0; cell < 4; ++cell) {
    for (size_t byte = 0; byte < 333; ++byte) sum[cell][byte] ^= b[cell][byte];
  }
  Encode(*code, sum);
  for (size_t cell = 4; cell < 6; ++cell) {
    for (size_t byte = 0; byte < 333; ++byte) {
      ASSERT_EQ(sum[cell][byte], a[cell][byte] ^ b[cell][byte]) << Replay();
    }
  }
}

}  // namespace
}  // namespace t0fs::ec
