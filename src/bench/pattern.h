// Data written by the benchmarks, and its verification.
//
// Two kinds of content, both incompressible:
//  - the verify pattern: every 512-byte unit of a file is a pseudo-random
//    stream seeded by (seed, file id, unit offset), so any block can be
//    regenerated and compared on read, whatever wrote it and in which order;
//  - the fast fill (default for timed writes without --verify): a buffer is
//    filled with random bytes once, and each write stamps the block's offset
//    and a counter into the first 16 bytes of every 4 KiB, which defeats
//    block-level deduplication at the cost of a few stores per page (fio's
//    scramble_buffers).
// Thread safety: free functions on caller-owned memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace t0fs::bench {

inline constexpr size_t kPatternUnit = 512;

// Fills `buf` with the verify pattern of bytes [offset, offset+buf.size()) of file `file_id`.
void FillPattern(std::span<std::byte> buf, uint64_t seed, uint64_t file_id, uint64_t offset);
// Checks `buf` against the pattern; returns the offset (in the file) of the
// first differing byte, or nothing if all match.
std::optional<uint64_t> CheckPattern(std::span<const std::byte> buf, uint64_t seed,
                                     uint64_t file_id, uint64_t offset);

// Fills with random bytes (once per buffer).
void FillRandom(std::span<std::byte> buf, uint64_t seed);
// Stamps (offset, counter) into every 4 KiB page of `buf` (see above).
void Scramble(std::span<std::byte> buf, uint64_t offset, uint64_t counter);

// 64-bit mixing function (splitmix64 finaliser); also used for seeds.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A small fast PRNG (xoshiro256**-like quality is not needed; splitmix64 stream).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n > 0), multiply-shift (bias < 2^-32 for n < 2^32).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace t0fs::bench
