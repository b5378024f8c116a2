// The bytes a write stores: pseudo-random, a function of the step and the
// file offset (splitmix64 of the step and the 8-byte word), never 0. So a
// hole (zeros) where data belongs and data where a hole belongs both show;
// data at a shifted offset or from another step shows too; and a few bytes
// found in the file name the step that wrote them (Runner::WhoWrote).
#pragma once

#include <cstdint>
#include <span>

namespace t0fs::fsx {

inline uint64_t PatternWord(uint64_t step, uint64_t word_idx) {
  uint64_t z = step * 0x9E3779B97F4A7C15ULL + word_idx * 0xD1B54A32D192ED03ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

inline uint8_t PatternByte(uint64_t step, uint64_t offset) {
  auto byte = static_cast<uint8_t>(PatternWord(step, offset / 8) >> (8 * (offset % 8)));
  return byte == 0 ? 1 : byte;
}

// Fills `out` with what step `step` writes at file offset `offset`.
inline void FillPattern(uint64_t step, uint64_t offset, std::span<uint8_t> out) {
  uint64_t idx = 0;
  while (idx < out.size()) {
    const uint64_t pos = offset + idx;
    uint64_t word = PatternWord(step, pos / 8) >> (8 * (pos % 8));
    for (uint64_t byte_idx = pos % 8; byte_idx < 8 && idx < out.size(); ++byte_idx, ++idx) {
      auto byte = static_cast<uint8_t>(word);
      out[idx] = byte == 0 ? 1 : byte;
      word >>= 8;
    }
  }
}

}  // namespace t0fs::fsx
