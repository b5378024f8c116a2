// The bytes a write stores: a sawtooth of period 251 whose phase depends on
// the step and the file offset. Never 0, so a hole (zeros) where data belongs
// and data where a hole belongs both show; 251 is prime and does not divide
// 4096, so data landing at a shifted offset or coming from an older step
// shows too (and WrittenBy() can tell which step wrote a byte).
#pragma once

#include <cstdint>
#include <span>

namespace t0fs::fsx {

inline constexpr uint64_t kPatternPeriod = 251;
inline constexpr uint64_t kPatternStepMul = 37;

inline uint8_t PatternByte(uint64_t step, uint64_t offset) {
  return static_cast<uint8_t>(1 + (offset + step * kPatternStepMul) % kPatternPeriod);
}

// Fills `out` with what step `step` writes at file offset `offset`.
inline void FillPattern(uint64_t step, uint64_t offset, std::span<uint8_t> out) {
  uint64_t phase = (offset + step * kPatternStepMul) % kPatternPeriod;
  for (uint8_t& byte : out) {
    byte = static_cast<uint8_t>(1 + phase);
    if (++phase == kPatternPeriod) phase = 0;
  }
}

}  // namespace t0fs::fsx
