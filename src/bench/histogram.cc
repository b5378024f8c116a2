#include "bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace t0fs::bench {

Histogram::Histogram() : counts_(kBucketCount, 0) {}

size_t Histogram::BucketOf(uint64_t value) {
  if (value < 2 * kSubBuckets) return static_cast<size_t>(value);
  unsigned msb = 63 - static_cast<unsigned>(std::countl_zero(value));  // >= kSubBucketBits + 1
  unsigned shift = msb - kSubBucketBits;
  uint64_t sub = (value >> shift) - kSubBuckets;  // 0 .. kSubBuckets-1
  return static_cast<size_t>(2 * kSubBuckets + (shift - 1) * kSubBuckets + sub);
}

uint64_t Histogram::BucketLow(size_t index) {
  if (index < 2 * kSubBuckets) return index;
  size_t rel = index - 2 * kSubBuckets;
  unsigned shift = static_cast<unsigned>(rel / kSubBuckets) + 1;
  uint64_t sub = rel % kSubBuckets;
  return (kSubBuckets + sub) << shift;
}

uint64_t Histogram::BucketWidth(size_t index) {
  if (index < 2 * kSubBuckets) return 1;
  unsigned shift = static_cast<unsigned>((index - 2 * kSubBuckets) / kSubBuckets) + 1;
  return uint64_t{1} << shift;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t idx = 0; idx < kBucketCount; ++idx) counts_[idx] += other.counts_[idx];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::Clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

static double Midpoint(size_t index) {
  return static_cast<double>(Histogram::BucketLow(index)) +
         (static_cast<double>(Histogram::BucketWidth(index)) - 1.0) / 2.0;
}

double Histogram::StdDev() const {
  if (count_ < 2) return 0.0;
  double mean = Mean();
  double acc = 0.0;
  for (size_t idx = 0; idx < kBucketCount; ++idx) {
    if (counts_[idx] == 0) continue;
    double d = Midpoint(idx) - mean;
    acc += d * d * static_cast<double>(counts_[idx]);
  }
  return std::sqrt(acc / static_cast<double>(count_ - 1));
}

uint64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min();
  if (p >= 100) return max_;
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t idx = 0; idx < kBucketCount; ++idx) {
    seen += counts_[idx];
    if (seen >= rank) {
      auto mid = static_cast<uint64_t>(std::llround(Midpoint(idx)));
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

std::vector<std::pair<uint32_t, uint64_t>> Histogram::Sparse() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (size_t idx = 0; idx < kBucketCount; ++idx) {
    if (counts_[idx] != 0) out.emplace_back(static_cast<uint32_t>(idx), counts_[idx]);
  }
  return out;
}

bool Histogram::LoadSparse(const std::vector<std::pair<uint32_t, uint64_t>>& buckets,
                           uint64_t sum, uint64_t min, uint64_t max) {
  Clear();
  uint64_t total = 0;
  for (const auto& [index, count] : buckets) {
    if (index >= kBucketCount) return false;
    counts_[index] += count;
    total += count;
  }
  count_ = total;
  sum_ = sum;
  if (total == 0) return true;
  if (min > max) return false;
  min_ = min;
  max_ = max;
  return true;
}

}  // namespace t0fs::bench
