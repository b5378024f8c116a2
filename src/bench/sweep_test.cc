#include "bench/sweep_workload.h"

#include <gtest/gtest.h>

namespace t0fs::bench {
namespace {

TEST(Sweep, ThreadListPowersOfTwoUpToMax) {
  EXPECT_EQ(*SweepThreadList("", 8), (std::vector<uint32_t>{1, 2, 4, 8}));
  EXPECT_EQ(*SweepThreadList("", 6), (std::vector<uint32_t>{1, 2, 4, 6}));
  EXPECT_EQ(*SweepThreadList("", 1), (std::vector<uint32_t>{1}));
  EXPECT_EQ(*SweepThreadList("1,3,16", 8), (std::vector<uint32_t>{1, 3, 16}));
  EXPECT_FALSE(SweepThreadList("4,2", 8).ok());
  EXPECT_FALSE(SweepThreadList("1,x", 8).ok());
  EXPECT_FALSE(SweepThreadList("0", 8).ok());
  EXPECT_FALSE(SweepThreadList("", 0).ok());
}

TEST(Sweep, PeakAndPlateau) {
  // Seed 004's shape: write plateaus from 32 threads, read peaks at 64.
  auto w = AnalyzeCurve({{8, 20}, {16, 33}, {32, 39}, {64, 40}, {128, 40.5}, {256, 39}});
  EXPECT_EQ(w.peak_threads, 128u);
  EXPECT_TRUE(w.has_plateau);
  EXPECT_EQ(w.plateau_threads, 32u);
  EXPECT_NEAR(w.plateau, (39 + 40 + 40.5 + 39) / 4.0, 1e-9);
  auto rising = AnalyzeCurve({{1, 1}, {2, 2}, {4, 4}});
  EXPECT_FALSE(rising.has_plateau);
  EXPECT_EQ(rising.peak_threads, 4u);
}

TEST(Sweep, ValidationNamesTheProblem) {
  SweepSpec spec;
  spec.path = "/tmp";
  spec.threads = {1, 2, 64};
  spec.total = 64 << 20;
  spec.record = 16 << 20;
  Status st = ValidateSweepSpec(spec);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("smaller than one record"), std::string::npos);
}

}  // namespace
}  // namespace t0fs::bench
