#include "metrics/histogram.h"

#include <cmath>

#include <fmt/format.h>

#include "metrics/names.h"
#include "metrics/text_format.h"

namespace t0fs::metrics {

std::vector<double> DefaultLatencyBuckets() {
  return {10e-6, 20e-6, 50e-6,  100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3,
          20e-3, 50e-3, 100e-3, 200e-3, 500e-3, 1,      2,    5,    10};
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double bound = start;
  for (int bucket_idx = 0; bucket_idx < count; ++bucket_idx) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  std::vector<double> bounds;
  for (int bucket_idx = 0; bucket_idx < count; ++bucket_idx) {
    bounds.push_back(start + width * bucket_idx);
  }
  return bounds;
}

std::shared_ptr<const HistogramBuckets> HistogramBuckets::Make(std::vector<double> bounds,
                                                               std::string_view metric) {
  // A trailing +Inf is accepted and dropped: it is always implicit.
  if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) bounds.pop_back();
  for (size_t bound_idx = 0; bound_idx < bounds.size(); ++bound_idx) {
    if (!std::isfinite(bounds[bound_idx])) {
      Die(fmt::format("histogram {}: bucket bound {} is not finite", metric, bounds[bound_idx]));
    }
    if (bound_idx > 0 && !(bounds[bound_idx] > bounds[bound_idx - 1])) {
      Die(fmt::format("histogram {}: bucket bounds must be strictly increasing ({} after {})",
                      metric, bounds[bound_idx], bounds[bound_idx - 1]));
    }
  }
  auto buckets = std::make_shared<HistogramBuckets>();
  for (double bound : bounds) {
    std::string text = "le=\"";
    AppendValue(text, bound);
    text.push_back('"');
    buckets->le.push_back(std::move(text));
  }
  buckets->le.push_back("le=\"+Inf\"");
  buckets->bounds = std::move(bounds);
  return buckets;
}

Histogram::Histogram(std::shared_ptr<const HistogramBuckets> buckets)
    : buckets_(std::move(buckets)),
      bounds_(buckets_->bounds.data()),
      num_bounds_(buckets_->bounds.size()),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(num_bounds_ + 1)) {}

Histogram::Snapshot Histogram::Collect() const {
  Snapshot snap;
  snap.cumulative.resize(num_bounds_ + 1);
  uint64_t running = 0;
  for (size_t bucket_idx = 0; bucket_idx <= num_bounds_; ++bucket_idx) {
    running += counts_[bucket_idx].load(std::memory_order_relaxed);
    snap.cumulative[bucket_idx] = running;
  }
  snap.count = running;
  snap.sum = sum_.load(std::memory_order_relaxed);
  return snap;
}

}  // namespace t0fs::metrics
