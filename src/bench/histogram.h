// Histogram: a log-linear latency histogram (HdrHistogram-like) that merges
// exactly across threads, ranks and runs.
//
// Values (nanoseconds, or any non-negative integer) below 2*kSubBuckets are
// counted exactly; above, each power of two is split into kSubBuckets equal
// buckets, so a bucket is at most 1/kSubBuckets of its lower bound wide. A
// percentile is reported as the midpoint of its bucket, clamped to the exact
// min and max: its relative error is at most 1/(2*kSubBuckets) = 0.39 %.
// Mean, min and max are exact (kept beside the buckets).
//
// Merging adds bucket counts: the result is exactly the histogram of the
// union of the samples, whatever the order (so ranks can merge by summation).
//
// Thread safety: none; one histogram per worker thread, merged after the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace t0fs::bench {

class Histogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;  // 128
  static constexpr size_t kBucketCount = 2 * kSubBuckets + (63 - kSubBucketBits) * kSubBuckets;

  Histogram();

  void Record(uint64_t value) {
    ++counts_[BucketOf(value)];
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  void Merge(const Histogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  // Exact sum of the recorded values (wraps after 2^64 ns = 584 years of latency).
  uint64_t sum() const { return sum_; }
  double Mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }
  // Standard deviation estimated from bucket midpoints.
  double StdDev() const;
  // Value at percentile p (0..100]: the smallest bucket whose cumulative count
  // reaches ceil(p/100*count), as its midpoint, clamped to [min, max].
  uint64_t Percentile(double p) const;

  // Bucket geometry (public for tests and serialisation).
  static size_t BucketOf(uint64_t value);
  static uint64_t BucketLow(size_t index);
  static uint64_t BucketWidth(size_t index);

  // Non-empty buckets as (index, count), ascending; the serialised form.
  std::vector<std::pair<uint32_t, uint64_t>> Sparse() const;
  // Rebuilds from Sparse() output plus the exact count/sum/min/max. Returns
  // false if the data is inconsistent (bad index, counts not adding up).
  bool LoadSparse(const std::vector<std::pair<uint32_t, uint64_t>>& buckets, uint64_t sum,
                  uint64_t min, uint64_t max);
  const std::vector<uint64_t>& counts() const { return counts_; }

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace t0fs::bench
