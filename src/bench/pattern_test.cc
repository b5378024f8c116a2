#include "bench/pattern.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/buffer.h"

namespace t0fs::bench {
namespace {

TEST(Pattern, AnySliceVerifiesAndAFlippedByteIsFound) {
  AlignedBuffer whole(64 << 10);
  FillPattern(whole.span(), 5, 3, 0);
  // A slice at an odd offset regenerates the same bytes.
  AlignedBuffer part(1000);
  FillPattern(part.span(), 5, 3, 12345);
  EXPECT_EQ(std::memcmp(part.data(), whole.data() + 12345, 1000), 0);
  EXPECT_FALSE(CheckPattern(whole.span(), 5, 3, 0).has_value());
  whole.data()[40000] ^= std::byte{1};
  auto bad = CheckPattern(whole.span(), 5, 3, 0);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 40000u);
  // Another file id or seed does not verify.
  AlignedBuffer other(4096);
  FillPattern(other.span(), 5, 4, 0);
  EXPECT_TRUE(CheckPattern(other.span(), 5, 3, 0).has_value());
}

TEST(Pattern, DataIsIncompressibleAndNotDeduplicable) {
  AlignedBuffer buf(1 << 20);
  FillRandom(buf.span(), 1);
  // Byte histogram is flat: no byte value above 0.6 % (uniform = 0.39 %).
  std::vector<size_t> counts(256);
  for (size_t idx = 0; idx < buf.size(); ++idx) ++counts[static_cast<uint8_t>(buf.data()[idx])];
  for (size_t c : counts) EXPECT_LT(c, buf.size() * 6 / 1000);
  // Scramble makes two writes of the same buffer differ in every page.
  AlignedBuffer a(8192), b(8192);
  FillRandom(a.span(), 2);
  FillRandom(b.span(), 2);
  Scramble(a.span(), 0, 1);
  Scramble(b.span(), 8192, 2);
  EXPECT_NE(std::memcmp(a.data(), b.data(), 4096), 0);
  EXPECT_NE(std::memcmp(a.data() + 4096, b.data() + 4096, 4096), 0);
}

TEST(Pattern, BuffersArePageAligned) {
  AlignedBuffer buf(12345);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 4096, 0u);
}

}  // namespace
}  // namespace t0fs::bench
