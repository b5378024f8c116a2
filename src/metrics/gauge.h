// Gauge: a value that goes up and down (queue depth, bytes free, node state).
//
// Resolve once with family.With({...}); Set() is a relaxed atomic store,
// Add()/Inc()/Dec() a compare-and-swap loop on a double (exact for integers
// up to 2^53). For values that already live elsewhere (chunks per volume,
// node states), prefer a callback family (Registry::AddCallback) evaluated at
// scrape time over keeping a gauge in sync.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>

namespace t0fs::metrics {

class alignas(64) Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void Sub(double v) { value_.fetch_sub(v, std::memory_order_relaxed); }
  void Inc() { Add(1); }
  void Dec() { Sub(1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

}  // namespace t0fs::metrics
