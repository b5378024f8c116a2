// Hot-path cost of the metric types: ns per operation, one thread and all
// threads hammering the same child. Prints a table; asserts nothing.
//   metrics_bench [iterations per thread]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "metrics/op_metrics.h"
#include "metrics/registry.h"

namespace {

using Clock = std::chrono::steady_clock;

// ns per call of op() when `threads` threads each call it `iters` times.
double NsPerOp(int threads, long iters, const std::function<void(long)>& op) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  std::vector<double> ns(static_cast<size_t>(threads));
  for (int thread_idx = 0; thread_idx < threads; ++thread_idx) {
    workers.emplace_back([&, thread_idx] {
      ++ready;
      while (!go.load()) {
      }
      auto start = Clock::now();
      for (long iter = 0; iter < iters; ++iter) op(iter);
      ns[static_cast<size_t>(thread_idx)] =
          std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
          static_cast<double>(iters);
    });
  }
  while (ready.load() < threads) {
  }
  go = true;
  for (auto& w : workers) w.join();
  double sum = 0;
  for (double v : ns) sum += v;
  return sum / threads;  // mean per-thread latency of one call
}

}  // namespace

int main(int argc, char** argv) {
  using namespace t0fs::metrics;
  long iters = argc > 1 ? std::atol(argv[1]) : 20'000'000;
  int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  Registry registry;
  Counter& counter = registry.AddCounter("bench_ops_total", "h", {"op"}).With({{"op", "read"}});
  Gauge& gauge = registry.AddGauge("bench_depth", "h").With({});
  DoubleCounter& dcounter = registry.AddDoubleCounter("bench_seconds_total", "h").With({});
  Histogram& hist = registry.AddHistogram("bench_latency_seconds", "h").With({});
  std::vector<double> samples(1024);
  for (size_t sample_idx = 0; sample_idx < samples.size(); ++sample_idx) {
    samples[sample_idx] = 1e-6 * static_cast<double>(1 + sample_idx * sample_idx);  // 1 µs .. 1 s
  }
  OpMetrics op(&registry.AddCounter("bench_fs_ops_total", "h", {"op", "result"}),
               &registry.AddHistogram("bench_fs_op_duration_seconds", "h", {"op"}), "lookup");
  struct Case {
    const char* name;
    std::function<void(long)> op;
  };
  std::vector<Case> cases = {
      {"Counter::Inc", [&](long) { counter.Inc(); }},
      {"DoubleCounter::Add", [&](long) { dcounter.Add(1e-6); }},
      {"Gauge::Inc", [&](long) { gauge.Inc(); }},
      {"Gauge::Set", [&](long i) { gauge.Set(static_cast<double>(i)); }},
      {"Histogram::Observe", [&](long i) { hist.Observe(samples[static_cast<size_t>(i) & 1023]); }},
      {"ScopedTimer+Observe", [&](long) { ScopedTimer t(hist); }},
      {"OpMetrics ok",
       [&](long i) { op.Record(t0fs::StatusCode::kOk, std::chrono::nanoseconds(i)); }},
      {"OpMetrics not_found",
       [&](long i) { op.Record(t0fs::StatusCode::kNotFound, std::chrono::nanoseconds(i)); }},
  };
  std::printf("%-22s %12s %18s\n", "operation", "1 thread ns",
              "contended ns ("
              "threads)");
  for (const Case& c : cases) {
    double single = NsPerOp(1, iters, c.op);
    double contended = NsPerOp(threads, iters / threads, c.op);
    std::printf("%-22s %12.1f %15.1f (%d)\n", c.name, single, contended, threads);
  }
  // Keep the values observable so nothing is optimised away.
  return registry.Render().empty() ? 1 : 0;
}
