// Counter and DoubleCounter: monotonic values (Prometheus type "counter").
//
// A counter is a child of a Family (see family.h): resolve it once with
// family.With({...}) and keep the reference; Inc() is then one relaxed
// atomic add, with no lock and no allocation. Each counter sits on its own
// cache line so two hot counters never share one.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace t0fs::metrics {

// Counts events or bytes. Wraps at 2^64, which no counter here reaches.
class alignas(64) Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A counter of a non-integral quantity (seconds of CPU, joules). Add() is a
// compare-and-swap loop, so prefer Counter for hot integral counts.
class alignas(64) DoubleCounter {
 public:
  // Negative and NaN increments are ignored: a counter never goes down.
  void Add(double v) {
    if (!(v > 0)) return;
    value_.fetch_add(v, std::memory_order_relaxed);
  }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

}  // namespace t0fs::metrics
