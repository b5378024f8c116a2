#include "common/clock.h"

#include <time.h>

namespace t0fs {

Timespec WallNow() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return Timespec{ts.tv_sec, static_cast<uint32_t>(ts.tv_nsec)};
}

uint64_t MonoNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace t0fs
