#include "data/copier.h"

#include <gtest/gtest.h>

namespace t0fs::data {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint64_t kRate = 100u << 20;  // 100 MiB/s: 1 MiB is a 10 ms share
constexpr size_t kMiB = 1u << 20;

// Work slower than the budget is not slowed further: each piece may go on at
// once (the old throttle slept a whole share on top of the work, halving
// the rate of a copier that was already near it).
TEST(ReserveBandwidth, WorkSlowerThanTheBudgetIsNotSlowedFurther) {
  const Clock::time_point t0{milliseconds(1000)};
  Clock::time_point until{};
  EXPECT_EQ(ReserveBandwidth(until, t0, kMiB, kRate), t0);  // idle: at once
  for (int i = 1; i <= 5; ++i) {
    const Clock::time_point now = t0 + milliseconds(12 * i);  // 12 ms per 10 ms share
    EXPECT_EQ(ReserveBandwidth(until, now, kMiB, kRate), now) << i;
  }
}

// Work faster than the budget waits for its share: the rate holds.
TEST(ReserveBandwidth, FastWorkIsHeldToTheRate) {
  const Clock::time_point t0{milliseconds(1000)};
  Clock::time_point until{};
  Clock::time_point wake = ReserveBandwidth(until, t0, kMiB, kRate);
  for (int i = 1; i <= 5; ++i) {
    wake = ReserveBandwidth(until, wake + milliseconds(2), kMiB, kRate);  // 2 ms of work per piece
    EXPECT_EQ(wake, t0 + milliseconds(10 * i)) << i;
  }
  // Two workers share one budget: their reservations queue up.
  Clock::time_point other = ReserveBandwidth(until, wake, kMiB, kRate);
  EXPECT_EQ(other, t0 + milliseconds(60));
}

// An idle copier saves up at most one share: no burst after a pause.
TEST(ReserveBandwidth, NoBurstAfterIdle) {
  const Clock::time_point t0{milliseconds(1000)};
  Clock::time_point until{};
  ReserveBandwidth(until, t0, kMiB, kRate);
  const Clock::time_point later = t0 + milliseconds(5000);
  EXPECT_EQ(ReserveBandwidth(until, later, kMiB, kRate), later);
  EXPECT_EQ(ReserveBandwidth(until, later, kMiB, kRate), later + milliseconds(10));
  EXPECT_EQ(ReserveBandwidth(until, later, kMiB, kRate), later + milliseconds(20));
}

}  // namespace
}  // namespace t0fs::data
