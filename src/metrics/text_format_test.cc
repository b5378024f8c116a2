// The text exposition format: values, escaping, and golden output per type.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "metrics/registry.h"
#include "metrics/text_format.h"

namespace t0fs::metrics {
namespace {

TEST(TextFormat, Values) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-7), "-7");
  EXPECT_EQ(FormatValue(1e6), "1000000");                          // an integer, not 1e+06
  EXPECT_EQ(FormatValue(9007199254740993.0), "9007199254740992");  // 2^53+1 rounds in double
  EXPECT_EQ(FormatValue(1.5), "1.5");
  EXPECT_EQ(FormatValue(0.1), "0.1");  // shortest round-trip form
  EXPECT_EQ(FormatValue(1e-7), "1e-07");
  EXPECT_EQ(FormatValue(1e300), "1e+300");
  EXPECT_EQ(std::stod(FormatValue(0.1 + 0.2)), 0.1 + 0.2);  // reads back exactly
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  std::string out;
  AppendValue(out, uint64_t{18446744073709551615u});
  EXPECT_EQ(out, "18446744073709551615");  // uint64 counters exactly
}

TEST(TextFormat, LabelValueEscaping) {
  std::string out;
  AppendLabelValue(out, "a\\b\"c\nd");
  EXPECT_EQ(out, R"(a\\b\"c\nd)");
  out.clear();
  AppendLabelValue(out, "tab\tand é ✓ 𝄞");  // valid UTF-8 and tabs pass unchanged
  EXPECT_EQ(out, "tab\tand é ✓ 𝄞");
  out.clear();
  AppendLabelValue(out,
                   std::string_view("x\xff\xc3y\xed\xa0\x80z", 8));  // invalid bytes, a surrogate
  EXPECT_EQ(out, "x\uFFFD\uFFFDy\uFFFD\uFFFD\uFFFDz");
  EXPECT_EQ(RenderLabels({"op", "path"}, {"read", "/v\"1"}), R"(op="read",path="/v\"1")");
  EXPECT_EQ(RenderLabels({}, {}), "");
}

TEST(TextFormat, HelpEscaping) {
  std::string out;
  AppendHeader(out, "m", "line one\nback\\slash \"quotes\" stay", "gauge");
  EXPECT_EQ(out,
            "# HELP m line one\\nback\\\\slash \"quotes\" stay\n"
            "# TYPE m gauge\n");
}

TEST(TextFormat, CounterGolden) {
  Registry registry;
  auto& ops = registry.AddCounter("t0fs_test_ops_total", "Operations by type.", {"op", "result"});
  ops.With({{"result", "ok"}, {"op", "write"}}).Inc();
  ops.With({{"op", "read"}, {"result", "ok"}}).Inc(3);
  ops.WithValues({"read", "error"}).Inc(2);
  auto& seconds = registry.AddDoubleCounter("t0fs_test_busy_seconds_total", "Busy time.");
  seconds.With({}).Add(0.25);
  seconds.With({}).Add(-1);  // ignored: counters never go down
  EXPECT_EQ(registry.Render(),
            "# HELP t0fs_test_busy_seconds_total Busy time.\n"
            "# TYPE t0fs_test_busy_seconds_total counter\n"
            "t0fs_test_busy_seconds_total 0.25\n"
            "# HELP t0fs_test_ops_total Operations by type.\n"
            "# TYPE t0fs_test_ops_total counter\n"
            "t0fs_test_ops_total{op=\"read\",result=\"error\"} 2\n"
            "t0fs_test_ops_total{op=\"read\",result=\"ok\"} 3\n"
            "t0fs_test_ops_total{op=\"write\",result=\"ok\"} 1\n");
}

TEST(TextFormat, GaugeGolden) {
  Registry registry;
  auto& g = registry.AddGauge("t0fs_test_value", "Values.", {"k"});
  g.With({{"k", "a"}}).Set(1.5);
  g.With({{"k", "b"}}).Set(-2);
  g.With({{"k", "c"}}).Set(std::numeric_limits<double>::quiet_NaN());
  g.With({{"k", "d"}}).Set(std::numeric_limits<double>::infinity());
  Gauge& e = g.With({{"k", "e"}});
  e.Inc();
  e.Inc();
  e.Dec();
  e.Add(10);
  e.Sub(0.5);
  g.With({{"k", "quote\"d\n"}}).Set(3);
  EXPECT_EQ(registry.Render(),
            "# HELP t0fs_test_value Values.\n"
            "# TYPE t0fs_test_value gauge\n"
            "t0fs_test_value{k=\"a\"} 1.5\n"
            "t0fs_test_value{k=\"b\"} -2\n"
            "t0fs_test_value{k=\"c\"} NaN\n"
            "t0fs_test_value{k=\"d\"} +Inf\n"
            "t0fs_test_value{k=\"e\"} 10.5\n"
            "t0fs_test_value{k=\"quote\\\"d\\n\"} 3\n");
}

TEST(TextFormat, HistogramGolden) {
  Registry registry;
  auto& h = registry.AddHistogram("t0fs_test_latency_seconds", "Latency.", {"op"}, {0.125, 1, 10});
  Histogram& read = h.With({{"op", "read"}});
  read.Observe(0.0625);
  read.Observe(0.125);  // bounds are inclusive (le)
  read.Observe(0.5);
  read.Observe(16);           // above every bound: +Inf only
  h.With({{"op", "write"}});  // a child with no observations
  EXPECT_EQ(registry.Render(),
            "# HELP t0fs_test_latency_seconds Latency.\n"
            "# TYPE t0fs_test_latency_seconds histogram\n"
            "t0fs_test_latency_seconds_bucket{op=\"read\",le=\"0.125\"} 2\n"
            "t0fs_test_latency_seconds_bucket{op=\"read\",le=\"1\"} 3\n"
            "t0fs_test_latency_seconds_bucket{op=\"read\",le=\"10\"} 3\n"
            "t0fs_test_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
            "t0fs_test_latency_seconds_sum{op=\"read\"} 16.6875\n"
            "t0fs_test_latency_seconds_count{op=\"read\"} 4\n"
            "t0fs_test_latency_seconds_bucket{op=\"write\",le=\"0.125\"} 0\n"
            "t0fs_test_latency_seconds_bucket{op=\"write\",le=\"1\"} 0\n"
            "t0fs_test_latency_seconds_bucket{op=\"write\",le=\"10\"} 0\n"
            "t0fs_test_latency_seconds_bucket{op=\"write\",le=\"+Inf\"} 0\n"
            "t0fs_test_latency_seconds_sum{op=\"write\"} 0\n"
            "t0fs_test_latency_seconds_count{op=\"write\"} 0\n");
}

TEST(TextFormat, HistogramWithoutLabelsAndEdgeValues) {
  Registry registry;
  auto& h = registry.AddHistogram("t0fs_test_size_bytes", "Sizes.", {},
                                  {1, 2, std::numeric_limits<double>::infinity()});
  Histogram& sizes = h.With({});
  sizes.Observe(-5);                                        // below every bound: the first bucket
  sizes.Observe(std::numeric_limits<double>::quiet_NaN());  // +Inf bucket, sum NaN
  EXPECT_EQ(registry.Render(),
            "# HELP t0fs_test_size_bytes Sizes.\n"
            "# TYPE t0fs_test_size_bytes histogram\n"
            "t0fs_test_size_bytes_bucket{le=\"1\"} 1\n"
            "t0fs_test_size_bytes_bucket{le=\"2\"} 1\n"
            "t0fs_test_size_bytes_bucket{le=\"+Inf\"} 2\n"
            "t0fs_test_size_bytes_sum NaN\n"
            "t0fs_test_size_bytes_count 2\n");
}

TEST(TextFormat, DefaultBucketsAndTimer) {
  std::vector<double> bounds = DefaultLatencyBuckets();
  ASSERT_EQ(bounds.size(), 19u);
  EXPECT_DOUBLE_EQ(bounds.front(), 10e-6);
  EXPECT_DOUBLE_EQ(bounds.back(), 10);
  EXPECT_EQ(ExponentialBuckets(4096, 4, 3), (std::vector<double>{4096, 16384, 65536}));
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
  Registry registry;
  auto& h = registry.AddHistogram("t0fs_test_op_seconds", "Op latency.");
  Histogram& op = h.With({});
  { ScopedTimer timer(op); }
  op.ObserveDuration(std::chrono::milliseconds(3));
  Histogram::Snapshot snap = op.Collect();
  EXPECT_EQ(snap.count, 2u);
  EXPECT_GE(snap.sum, 0.003);
  std::string text = registry.Render();
  EXPECT_NE(text.find("t0fs_test_op_seconds_bucket{le=\"1e-05\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("t0fs_test_op_seconds_bucket{le=\"0.005\"} 2"), std::string::npos) << text;
}

TEST(TextFormat, CallbackFamilies) {
  Registry registry;
  registry.AddCallback(MetricType::kGauge, "t0fs_test_chunks", "Chunks per volume.", {"volume"},
                       [](SampleSink& sink) {
                         sink.Add({"/v2"}, 7);
                         sink.Add({"/v1"}, 3);
                         sink.Add({"/v1"}, 4);       // repeated labels: dropped
                         sink.Add({"/v3", "x"}, 1);  // wrong count: dropped
                       });
  registry.AddGaugeFn("t0fs_test_up", "Always 1.", [] { return 1.0; });
  registry.AddCallback(MetricType::kCounter, "t0fs_test_empty_total", "Nothing yet.", {"x"},
                       [](SampleSink&) {});
  registry.AddCallback(MetricType::kGauge, "t0fs_test_throws", "Throws.", {},
                       [](SampleSink&) { throw std::runtime_error("boom"); });
  registry.AddGauge("t0fs_test_unused", "No children: not rendered.", {"x"});
  EXPECT_EQ(registry.Render(),
            "# HELP t0fs_test_chunks Chunks per volume.\n"
            "# TYPE t0fs_test_chunks gauge\n"
            "t0fs_test_chunks{volume=\"/v1\"} 3\n"
            "t0fs_test_chunks{volume=\"/v2\"} 7\n"
            "# HELP t0fs_test_up Always 1.\n"
            "# TYPE t0fs_test_up gauge\n"
            "t0fs_test_up 1\n");
}

}  // namespace
}  // namespace t0fs::metrics
