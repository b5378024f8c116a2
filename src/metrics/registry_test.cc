// Registry: validation, registration rules, concurrency, process metrics.
#include <sys/time.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "metrics/names.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"

namespace t0fs::metrics {
namespace {

// The value of the first sample line starting with `series` (name and labels).
double SampleValue(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
  }
  ADD_FAILURE() << "no sample " << series << " in:\n" << text;
  return -1;
}

TEST(Names, Validation) {
  EXPECT_TRUE(ValidateMetricName("t0fs_data_bytes_total").ok());
  EXPECT_TRUE(ValidateMetricName("_x9").ok());
  EXPECT_FALSE(ValidateMetricName("").ok());
  EXPECT_FALSE(ValidateMetricName("9lives").ok());
  EXPECT_FALSE(ValidateMetricName("t0fs-data").ok());
  EXPECT_FALSE(ValidateMetricName("rule:ratio").ok());  // reserved for recording rules
  EXPECT_FALSE(ValidateMetricName("t0fs data").ok());
  EXPECT_TRUE(ValidateLabelName("op").ok());
  EXPECT_FALSE(ValidateLabelName("__name__").ok());
  EXPECT_FALSE(ValidateLabelName("a.b").ok());
  EXPECT_FALSE(ValidateLabelName("").ok());
}

using RegistryDeathTest = ::testing::Test;

TEST_F(RegistryDeathTest, ProgrammingErrorsAbortAtRegistration) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Registry r;
  EXPECT_DEATH(r.AddCounter("bad-name_total", "h"), "metric name 'bad-name_total'");
  EXPECT_DEATH(r.AddCounter("t0fs_ops", "h"), "counter names end in _total");
  EXPECT_DEATH(r.AddGauge("t0fs_ops_total", "h"), "only counter names end in _total");
  EXPECT_DEATH(r.AddGauge("t0fs_g", "h", {"__x"}), "reserved");
  EXPECT_DEATH(r.AddGauge("t0fs_g", "h", {"op", "op"}), "listed twice");
  EXPECT_DEATH(r.AddHistogram("t0fs_h", "h", {"le"}), "reserved for buckets");
  EXPECT_DEATH(r.AddHistogram("t0fs_h", "h", {}, {1, 1}), "strictly increasing");
  EXPECT_DEATH(r.AddHistogram("t0fs_h", "h", {}, {1, std::nan("")}), "not finite");
  EXPECT_DEATH(r.AddCallback(MetricType::kHistogram, "t0fs_h", "h", {}, [](SampleSink&) {}),
               "counters or gauges");

  r.AddGauge("t0fs_g", "h", {"op"});
  EXPECT_DEATH(r.AddGauge("t0fs_g", "h", {"other"}), "different types or labels");
  EXPECT_DEATH(r.AddHistogram("t0fs_g", "h", {"op"}), "different types or labels");
  r.AddCounter("t0fs_c_total", "h");
  EXPECT_DEATH(r.AddDoubleCounter("t0fs_c_total", "h"), "different value types");
  r.AddHistogram("t0fs_h", "h", {}, {1, 2});
  EXPECT_DEATH(r.AddHistogram("t0fs_h", "h", {}, {1, 3}), "different buckets");
  EXPECT_DEATH(r.AddGauge("t0fs_h_count", "h"), "clashes");
  EXPECT_DEATH(r.AddGauge("t0fs_h_bucket", "h"), "clashes");
  r.AddGaugeFn("t0fs_fn", "h", [] { return 1.0; });
  EXPECT_DEATH(r.AddGaugeFn("t0fs_fn", "h", [] { return 1.0; }), "registered twice");

  auto& g = r.AddGauge("t0fs_g", "h", {"op"});
  EXPECT_DEATH(g.With({{"nope", "x"}}), "unknown label 'nope'");
  EXPECT_DEATH(g.With({}), "0 label values given, the family has 1");
  EXPECT_DEATH(g.WithValues({"a", "b"}), "2 label values given");
  auto& two = r.AddGauge("t0fs_two", "h", {"a", "b"});
  EXPECT_DEATH(two.With({{"a", "x"}, {"a", "y"}}), "given twice");
}

TEST(Registry, SameFamilyTwiceIsShared) {
  Registry r;
  auto& a = r.AddCounter("t0fs_ops_total", "h", {"op"});
  auto& b = r.AddCounter("t0fs_ops_total", "h", {"op"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.With({{"op", "read"}}), &b.WithValues({"read"}));  // children are stable
  auto& h1 = r.AddHistogram("t0fs_lat_seconds", "h", {"op"});
  auto& h2 = r.AddHistogram("t0fs_lat_seconds", "h", {"op"});
  EXPECT_EQ(&h1, &h2);
}

TEST(Registry, RemoveAndReRegister) {
  Registry r;
  r.AddHistogram("t0fs_h", "h", {}, {1}).With({}).Observe(1);
  EXPECT_TRUE(r.Remove("t0fs_h"));
  EXPECT_FALSE(r.Remove("t0fs_h"));
  EXPECT_EQ(r.Render(), "");
  r.AddGauge("t0fs_h_count", "now free").With({}).Set(2);  // the histogram's series names are free
  EXPECT_EQ(r.Render(),
            "# HELP t0fs_h_count now free\n# TYPE t0fs_h_count gauge\nt0fs_h_count 2\n");
  EXPECT_TRUE(r.Remove("t0fs_h_count"));
  r.AddHistogram("t0fs_h", "h", {}, {5}).With({});  // other buckets than before: a new family
  EXPECT_NE(r.Render().find("t0fs_h_bucket{le=\"5\"} 0\n"), std::string::npos);
}

// Many threads update shared and private children while others render and
// create new children: every update is counted exactly.
TEST(Registry, ConcurrentUpdatesAreExact) {
  constexpr int kThreads = 8;
  constexpr int kIters = 100000;
  Registry r;
  auto& ops = r.AddCounter("t0fs_ops_total", "h", {"op"});
  auto& busy = r.AddDoubleCounter("t0fs_busy_seconds_total", "h");
  auto& depth = r.AddGauge("t0fs_depth", "h");
  auto& lat = r.AddHistogram("t0fs_lat_seconds", "h", {}, {1, 2, 3});
  auto& per_thread = r.AddCounter("t0fs_thread_ops_total", "h", {"thread"});
  Counter& shared = ops.With({{"op", "read"}});
  std::atomic<bool> stop{false};
  std::thread renderer([&] {
    while (!stop.load()) {
      std::string text = r.Render();
      ASSERT_NE(text.find("t0fs_ops_total"), std::string::npos);
    }
  });
  std::vector<std::thread> threads;
  for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
    threads.emplace_back([&, thread_idx] {
      Counter& mine = per_thread.With({{"thread", std::to_string(thread_idx)}});
      Histogram& h = lat.With({});
      for (int iter = 0; iter < kIters; ++iter) {
        shared.Inc();
        mine.Inc(2);
        busy.With({}).Add(0.5);
        depth.With({}).Inc();
        h.Observe(static_cast<double>(iter % 4));  // 0,1,2,3: one per bucket, and +Inf never
        if (iter % 1000 == 0) ops.With({{"op", std::to_string(iter)}}).Inc();
      }
    });
  }
  for (auto& t : threads) t.join();
  stop = true;
  renderer.join();
  EXPECT_EQ(shared.Value(), uint64_t{kThreads} * kIters);
  EXPECT_EQ(busy.With({}).Value(), 0.5 * kThreads * kIters);
  EXPECT_EQ(depth.With({}).Value(), double{kThreads} * kIters);
  for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
    EXPECT_EQ(per_thread.With({{"thread", std::to_string(thread_idx)}}).Value(), 2u * kIters);
  }
  EXPECT_EQ(ops.With({{"op", "0"}}).Value(), uint64_t{kThreads});
  Histogram::Snapshot snap = lat.With({}).Collect();
  uint64_t total = uint64_t{kThreads} * kIters;
  EXPECT_EQ(snap.count, total);
  EXPECT_EQ(snap.cumulative, (std::vector<uint64_t>{total / 2, total * 3 / 4, total, total}));
  EXPECT_EQ(snap.sum, 1.5 * static_cast<double>(total));  // integers: exact in double
  std::string text = r.Render();
  EXPECT_EQ(SampleValue(text, "t0fs_ops_total{op=\"read\"}"), static_cast<double>(total));
  EXPECT_EQ(SampleValue(text, "t0fs_lat_seconds_count"), static_cast<double>(total));
}

TEST(ProcessMetrics, ReadFromProc) {
  Registry r;
  AddProcessMetrics(r);
  AddBuildInfo(r, "test");
  std::string text = r.Render();
  EXPECT_GE(SampleValue(text, "process_cpu_seconds_total"), 0);
  EXPECT_GT(SampleValue(text, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(SampleValue(text, "process_virtual_memory_bytes"), 1 << 20);
  EXPECT_GE(SampleValue(text, "process_open_fds"), 3);  // at least stdin, stdout, stderr
  EXPECT_GT(SampleValue(text, "process_max_fds"), 0);
  timeval now{};
  ::gettimeofday(&now, nullptr);
  double start = SampleValue(text, "process_start_time_seconds");
  EXPECT_LE(start, static_cast<double>(now.tv_sec) + 2);
  EXPECT_GT(start, static_cast<double>(now.tv_sec) - 86400);  // this test did not run for a day
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  EXPECT_EQ(SampleValue(text, "t0fs_build_info{component=\"test\",version=\"" +
                                  std::string(Version()) + "\"}"),
            1);
  EXPECT_FALSE(Version().empty());
}

}  // namespace
}  // namespace t0fs::metrics
