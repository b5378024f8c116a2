// Wall-clock timestamps as stored in inodes.
#pragma once

#include <cstdint>

namespace t0fs {

struct Timespec {
  int64_t sec = 0;
  uint32_t nsec = 0;
  friend bool operator==(const Timespec&, const Timespec&) = default;
};

Timespec WallNow();
// Monotonic nanoseconds, for intervals.
uint64_t MonoNanos();

}  // namespace t0fs
