#include "bench/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace t0fs::bench {
namespace {

uint64_t ExactPercentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

TEST(Histogram, BucketsCoverEveryValueContiguously) {
  for (size_t idx = 0; idx + 1 < Histogram::kBucketCount; ++idx) {
    ASSERT_EQ(Histogram::BucketLow(idx) + Histogram::BucketWidth(idx),
              Histogram::BucketLow(idx + 1))
        << idx;
  }
  for (uint64_t v : {0ull, 1ull, 255ull, 256ull, 257ull, 1000ull, 123456789ull, ~0ull}) {
    size_t b = Histogram::BucketOf(v);
    EXPECT_LE(Histogram::BucketLow(b), v);
    EXPECT_LE(v - Histogram::BucketLow(b), Histogram::BucketWidth(b) - 1);
  }
}

TEST(Histogram, PercentilesWithinOnePercentOfExact) {
  // A log-normal latency distribution spanning ~1 us .. ~100 ms.
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(11.0, 1.5);
  std::vector<uint64_t> values;
  Histogram h;
  for (int idx = 0; idx < 200000; ++idx) {
    auto v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.Record(v);
  }
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    double exact = static_cast<double>(ExactPercentile(values, p));
    double got = static_cast<double>(h.Percentile(p));
    EXPECT_LE(std::fabs(got - exact) / exact, 0.01) << "p" << p << " exact " << exact;
  }
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  long double sum = 0;
  for (uint64_t v : values) sum += v;
  EXPECT_NEAR(h.Mean(), static_cast<double>(sum / values.size()), 1e-6 * h.Mean());
}

TEST(Histogram, UniformDistributionKnownPercentiles) {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.Record(v * 1000);  // 1 us .. 100 ms
  EXPECT_NEAR(static_cast<double>(h.Percentile(50)), 50e6, 0.01 * 50e6);
  EXPECT_NEAR(static_cast<double>(h.Percentile(99)), 99e6, 0.01 * 99e6);
  EXPECT_NEAR(static_cast<double>(h.Percentile(99.9)), 99.9e6, 0.01 * 99.9e6);
  EXPECT_EQ(h.Percentile(100), 100000000u);
}

TEST(Histogram, MergeIsExact) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> dist(1, 50000000);
  Histogram all, a, b, c;
  for (int idx = 0; idx < 30000; ++idx) {
    uint64_t v = dist(rng);
    all.Record(v);
    (idx % 3 == 0 ? a : idx % 3 == 1 ? b : c).Record(v);
  }
  Histogram merged;
  merged.Merge(c);
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.counts(), all.counts());
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.sum(), all.sum());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  for (double p : {50.0, 99.0, 99.9}) EXPECT_EQ(merged.Percentile(p), all.Percentile(p));
}

TEST(Histogram, SparseRoundTrip) {
  Histogram h;
  for (uint64_t v : {5ull, 5ull, 900ull, 70000ull, 123456789ull}) h.Record(v);
  Histogram back;
  ASSERT_TRUE(back.LoadSparse(h.Sparse(), h.sum(), h.min(), h.max()));
  EXPECT_EQ(back.counts(), h.counts());
  EXPECT_EQ(back.Percentile(50), h.Percentile(50));
  EXPECT_FALSE(back.LoadSparse({{static_cast<uint32_t>(Histogram::kBucketCount), 1}}, 0, 0, 0));
}

TEST(Histogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(99), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
}

}  // namespace
}  // namespace t0fs::bench
