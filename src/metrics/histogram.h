// Histogram: the distribution of observed values (latencies, I/O sizes) in
// buckets with fixed upper bounds, exposed as Prometheus cumulative buckets
// plus _sum and _count.
//
// Observe() finds the bucket by binary search and does two relaxed atomic
// adds (the bucket's count and the sum); no lock, no allocation. Per-bucket
// counts are stored non-cumulative and summed at scrape time, and _count is
// derived from them, so a scrape always shows _count equal to the +Inf
// bucket, as Prometheus requires. _sum is read separately and may lag the
// counts by the observations in flight during the scrape.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace t0fs::metrics {

// Upper bounds, strictly increasing and finite; +Inf is implicit.
// 1-2-5 steps from 10 µs to 10 s (19 bounds), in seconds: covers a page-cache
// hit through a slow fsync or a repair copy.
std::vector<double> DefaultLatencyBuckets();
// start, start*factor, ... (count bounds). For sizes: ExponentialBuckets(4096, 4, 8)
// gives 4 KiB .. 64 MiB.
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// start, start+width, ... (count bounds).
std::vector<double> LinearBuckets(double start, double width, int count);

// The bounds of one histogram family, shared by its children, with the
// text of each `le` label rendered once.
struct HistogramBuckets {
  std::vector<double> bounds;   // finite upper bounds, strictly increasing
  std::vector<std::string> le;  // bounds.size() + 1 entries, the last "+Inf"
  // Validates (aborts naming `metric` on a programming error) and renders.
  static std::shared_ptr<const HistogramBuckets> Make(std::vector<double> bounds,
                                                      std::string_view metric);
};

class alignas(64) Histogram {
 public:
  explicit Histogram(std::shared_ptr<const HistogramBuckets> buckets);

  void Observe(double v) {
    counts_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
  }
  // Records a duration in seconds, the Prometheus base unit.
  template <typename Rep, typename Period>
  void ObserveDuration(std::chrono::duration<Rep, Period> d) {
    Observe(std::chrono::duration<double>(d).count());
  }

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Collect() const;
  const HistogramBuckets& buckets() const { return *buckets_; }

 private:
  // The first bucket whose bound is >= v (Prometheus buckets are `le`,
  // inclusive); NaN and values above every bound go to +Inf.
  size_t BucketIndex(double v) const {
    size_t lo = 0;
    size_t hi = num_bounds_;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (bounds_[mid] >= v) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    // NaN compares false everywhere, so it lands at num_bounds_ (+Inf).
    return lo;
  }

  std::shared_ptr<const HistogramBuckets> buckets_;
  const double* bounds_;
  size_t num_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // num_bounds_ + 1
  std::atomic<double> sum_{0};
};

// Observes the time from construction to destruction into `histogram`:
//   { ScopedTimer t(latency); DoRead(); }
class ScopedTimer {
 public:
  explicit ScopedTimer(Histogram& histogram)
      : histogram_(histogram), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() { histogram_.ObserveDuration(std::chrono::steady_clock::now() - start_); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Histogram& histogram_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace t0fs::metrics
