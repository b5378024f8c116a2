// ObjectReadAhead: sequential readers of an object are served from windows
// read ahead, other readers fetch what they ask for, and only good bytes are
// kept. The object is a byte vector here (the fetch is what the data node
// does with ranged GETs; tests/s3/object_tier.sh reads through real RGW).
#include "data/object_read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace t0fs::data {
namespace {

constexpr size_t kMiB = 1u << 20;

class FakeObject {
 public:
  explicit FakeObject(size_t size, uint32_t seed = 1) : bytes_(size) {
    std::mt19937 rng(seed);
    for (auto& b : bytes_) b = std::byte(rng());
  }

  // Fails (as a checksum mismatch) when the range touches a bad offset.
  ObjectReadAhead::Fetch fetch() {
    return [this](uint64_t offset, std::span<std::byte> out) -> Result<size_t> {
      ++fetches;
      fetched_bytes += out.size();
      std::this_thread::sleep_for(delay);
      if (offset >= bytes_.size()) return size_t{0};
      const size_t n = std::min<size_t>(out.size(), bytes_.size() - offset);
      for (uint64_t bad : bad_) {
        if (bad >= offset && bad < offset + n)
          return Status(StatusCode::kDataChecksum, "bad block");
      }
      std::memcpy(out.data(), bytes_.data() + offset, n);
      return n;
    };
  }

  std::vector<std::byte> Slice(uint64_t offset, size_t len) const {
    if (offset >= bytes_.size()) return {};
    len = std::min<size_t>(len, bytes_.size() - offset);
    return std::vector<std::byte>(bytes_.begin() + static_cast<ptrdiff_t>(offset),
                                  bytes_.begin() + static_cast<ptrdiff_t>(offset + len));
  }

  void Damage(uint64_t offset) { bad_.insert(offset); }

  // (Added to by the background fetches too.)
  std::atomic<int> fetches{0};
  std::atomic<uint64_t> fetched_bytes{0};
  std::chrono::milliseconds delay{0};  // each fetch takes this long

 private:
  std::vector<std::byte> bytes_;
  std::set<uint64_t> bad_;
};

std::vector<std::byte> ReadOf(ObjectReadAhead& ra, FakeObject& obj, ChunkId chunk, uint64_t version,
                              uint64_t offset, size_t len) {
  std::vector<std::byte> out(len);
  auto n = ra.Read(chunk, version, offset, out, obj.fetch());
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  out.resize(n.ok() ? *n : 0);
  return out;
}

// A reader going through 20 MiB in 1 MiB pieces: one fetch per window (8
// MiB, then 16 fetched ahead as soon as it reads from the first), the
// right bytes everywhere, the last read short at the object's end.
TEST(ObjectReadAhead, ASequentialReaderIsServedFromWindows) {
  const size_t size = 20 * kMiB + 1234;
  FakeObject obj(size);
  ObjectReadAhead ra;
  for (uint64_t off = 0; off < size; off += kMiB) {
    ASSERT_EQ(ReadOf(ra, obj, ChunkId(7), 3, off, kMiB), obj.Slice(off, kMiB)) << "at " << off;
  }
  EXPECT_EQ(ReadOf(ra, obj, ChunkId(7), 3, size, kMiB).size(), 0u);  // at the end
  EXPECT_EQ(obj.fetches, 2);
  EXPECT_EQ(obj.fetched_bytes, ObjectReadAhead::kMinWindow * 3);
  EXPECT_EQ(ra.fetches(), 2u);
  EXPECT_EQ(ra.fetched_ahead(), 1u);
  EXPECT_EQ(ra.hits(), 21u);
}

// A slow store: the reader that reaches the window on its way waits for it
// instead of fetching the same bytes, and gets the right ones.
TEST(ObjectReadAhead, AReaderWaitsForTheWindowOnItsWay) {
  FakeObject obj(40 * kMiB, 8);
  obj.delay = std::chrono::milliseconds(50);
  ObjectReadAhead ra;
  for (uint64_t off = 0; off < 40 * kMiB; off += kMiB) {
    ASSERT_EQ(ReadOf(ra, obj, ChunkId(5), 1, off, kMiB), obj.Slice(off, kMiB)) << "at " << off;
  }
  EXPECT_EQ(ra.fetches() - ra.fetched_ahead(), 1u);  // only the first window made the reader wait
  EXPECT_EQ(obj.fetches, 3);                         // 8 + 16 + 32 (short) MiB
}

// Destroyed while a window is on its way: it waits for that fetch, no more.
TEST(ObjectReadAhead, DestroyedWhileFetchingAhead) {
  FakeObject obj(64 * kMiB, 9);
  {
    ObjectReadAhead ra;
    for (uint64_t off = 0; off <= 4 * kMiB; off += kMiB) ReadOf(ra, obj, ChunkId(6), 1, off, kMiB);
    obj.delay = std::chrono::milliseconds(100);
  }
  EXPECT_LE(obj.fetches, 2);
}

// Windows double up to kMaxWindow; those of readers not seen lately are
// dropped to keep kBudget bytes at most, the latest reader's never.
TEST(ObjectReadAhead, WindowsGrowAndStayWithinTheBudget) {
  static_assert(ObjectReadAhead::kMinWindow == 8 * kMiB &&
                ObjectReadAhead::kMaxWindow == 32 * kMiB && ObjectReadAhead::kBudget == 128 * kMiB);
  FakeObject obj(100 * kMiB, 7);
  ObjectReadAhead ra;
  for (uint64_t off = 0; off < 100 * kMiB; off += kMiB) {
    ASSERT_EQ(ReadOf(ra, obj, ChunkId(1), 1, off, kMiB), obj.Slice(off, kMiB)) << "at " << off;
  }
  EXPECT_EQ(obj.fetches, 5);  // 8 + 16 + 32 + 32 + 32 (the last one short)
  EXPECT_EQ(obj.fetched_bytes, 120 * kMiB);

  // Three readers, each holding two 32 MiB windows (the one read and the
  // one fetched ahead): the first one's go.
  ObjectReadAhead three;
  for (uint64_t c = 2; c <= 4; ++c) {
    for (uint64_t off = 0; off < 41 * kMiB; off += kMiB)
      ReadOf(three, obj, ChunkId(c), 1, off, kMiB);
  }
  auto waited = [&] { return three.fetches() - three.fetched_ahead(); };
  const uint64_t before = waited();
  ASSERT_EQ(ReadOf(three, obj, ChunkId(3), 1, 41 * kMiB, kMiB), obj.Slice(41 * kMiB, kMiB));
  ASSERT_EQ(ReadOf(three, obj, ChunkId(4), 1, 41 * kMiB, kMiB), obj.Slice(41 * kMiB, kMiB));
  EXPECT_EQ(waited(), before);
  ASSERT_EQ(ReadOf(three, obj, ChunkId(2), 1, 41 * kMiB, kMiB), obj.Slice(41 * kMiB, kMiB));
  EXPECT_EQ(waited(), before + 1);
}

// Reads that jump about fetch just what they ask for: no window each time.
TEST(ObjectReadAhead, ARandomReaderFetchesWhatItAsks) {
  FakeObject obj(32 * kMiB, 2);
  ObjectReadAhead ra;
  const uint64_t offsets[] = {5 * kMiB + 4096, 17 * kMiB, 9 * kMiB + 100, 30 * kMiB};
  for (uint64_t off : offsets)
    ASSERT_EQ(ReadOf(ra, obj, ChunkId(1), 1, off, 65536), obj.Slice(off, 65536));
  EXPECT_EQ(obj.fetches, 4);
  EXPECT_EQ(obj.fetched_bytes, 4u * 65536);
  // Continuing where one ended is sequential: a window from there on.
  ASSERT_EQ(ReadOf(ra, obj, ChunkId(1), 1, 30 * kMiB + 65536, 65536),
            obj.Slice(30 * kMiB + 65536, 65536));
  ASSERT_EQ(ReadOf(ra, obj, ChunkId(1), 1, 30 * kMiB + 131072, 65536),
            obj.Slice(30 * kMiB + 131072, 65536));
  EXPECT_EQ(obj.fetches, 5);
  EXPECT_EQ(ra.hits(), 1u);
}

// Versions are objects of their own: a window of one never answers another.
TEST(ObjectReadAhead, VersionsAndChunksAreKeptApart) {
  FakeObject v1(4 * kMiB, 3), v2(4 * kMiB, 4);
  ObjectReadAhead ra;
  ASSERT_EQ(ReadOf(ra, v1, ChunkId(9), 1, 0, kMiB), v1.Slice(0, kMiB));
  ASSERT_EQ(ReadOf(ra, v2, ChunkId(9), 2, 0, kMiB), v2.Slice(0, kMiB));
  ASSERT_EQ(ReadOf(ra, v1, ChunkId(10), 1, 0, kMiB), v1.Slice(0, kMiB));
  EXPECT_EQ(v1.fetches, 2);
  EXPECT_EQ(v2.fetches, 1);
  ASSERT_EQ(ReadOf(ra, v2, ChunkId(9), 2, kMiB, kMiB), v2.Slice(kMiB, kMiB));
  ASSERT_EQ(ReadOf(ra, v1, ChunkId(9), 1, kMiB, kMiB), v1.Slice(kMiB, kMiB));
  EXPECT_EQ(v1.fetches + v2.fetches, 3);  // both from their windows
}

// A damaged block past the bytes asked for fails the window, not the read;
// a read of the damaged block itself fails.
TEST(ObjectReadAhead, DamagePastTheReadDoesNotFailIt) {
  FakeObject obj(16 * kMiB, 5);
  obj.Damage(6 * kMiB);
  ObjectReadAhead ra;
  ASSERT_EQ(ReadOf(ra, obj, ChunkId(2), 1, 0, kMiB), obj.Slice(0, kMiB));
  EXPECT_EQ(obj.fetches, 2);  // the window failed, the read alone did not
  std::vector<std::byte> out(kMiB);
  auto bad = ra.Read(ChunkId(2), 1, 6 * kMiB, out, obj.fetch());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataChecksum);
}

// Only kEntries windows are kept: the least recently used goes first.
TEST(ObjectReadAhead, TheLeastRecentlyUsedWindowGoesFirst) {
  FakeObject obj(2 * kMiB, 6);
  ObjectReadAhead ra;
  for (uint64_t c = 1; c <= ObjectReadAhead::kEntries; ++c) ReadOf(ra, obj, ChunkId(c), 1, 0, 4096);
  ReadOf(ra, obj, ChunkId(1), 1, 4096, 4096);  // chunk 1 used again: kept
  ReadOf(ra, obj, ChunkId(100), 1, 0, 4096);   // one more: chunk 2 goes
  const int before = obj.fetches;
  ReadOf(ra, obj, ChunkId(1), 1, 8192, 4096);
  EXPECT_EQ(obj.fetches, before);
  ReadOf(ra, obj, ChunkId(2), 1, 8192, 4096);
  EXPECT_EQ(obj.fetches, before + 1);
}

}  // namespace
}  // namespace t0fs::data
