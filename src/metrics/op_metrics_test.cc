// OpMetrics: counts by result and latency, and its lock-free error cache.
#include <cerrno>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/op_metrics.h"
#include "metrics/registry.h"

namespace t0fs::metrics {
namespace {

TEST(OpMetrics, ResultLabels) {
  EXPECT_EQ(ResultLabel(StatusCode::kOk), "ok");
  EXPECT_EQ(ResultLabel(StatusCode::kNotFound), "not_found");
  EXPECT_EQ(ResultLabel(StatusCode::kRpcTimeout), "rpc_timeout");
  EXPECT_EQ(ResultLabel(StatusCode::kMetaNoSession), "meta_no_session");
  EXPECT_EQ(ResultLabel(StatusCode::kIoError), "io_error");
  EXPECT_EQ(ResultLabel(static_cast<StatusCode>(999)), "unknown");
}

TEST(OpMetrics, ErrnoAndSnakeCaseLabels) {
  EXPECT_EQ(ErrnoLabel(0), "ok");
  EXPECT_EQ(ErrnoLabel(ENOENT), "enoent");
  EXPECT_EQ(ErrnoLabel(EINTR), "eintr");
  EXPECT_EQ(ErrnoLabel(100000), "errno_100000");
  EXPECT_EQ(SnakeCaseName("ChunkRead"), "chunk_read");
  EXPECT_EQ(SnakeCaseName("OpenLocal"), "open_local");
  EXPECT_EQ(SnakeCaseName("GetAttr"), "get_attr");
  EXPECT_EQ(SnakeCaseName("GETATTR"), "getattr");
  EXPECT_EQ(SnakeCaseName("COPY_FILE_RANGE"), "copy_file_range");
  EXPECT_EQ(SnakeCaseName("HTTPServer"), "http_server");
  EXPECT_EQ(SnakeCaseName("Hello"), "hello");
}

TEST(OpMetrics, CustomLabelName) {
  Registry registry;
  auto& ops = registry.AddCounter("t0fs_test_requests_total", "Requests.", {"method", "result"});
  auto& latency = registry.AddHistogram("t0fs_test_request_duration_seconds", "Latency.", {"method"});
  OpMetrics read(&ops, &latency, "chunk_read", "method");
  read.Record(StatusCode::kOk, std::chrono::microseconds(10));
  read.Record(StatusCode::kNotFound, std::chrono::microseconds(10));
  EXPECT_EQ(ops.With({{"method", "chunk_read"}, {"result", "ok"}}).Value(), 1u);
  EXPECT_EQ(ops.With({{"method", "chunk_read"}, {"result", "not_found"}}).Value(), 1u);
  EXPECT_EQ(latency.With({{"method", "chunk_read"}}).Collect().count, 2u);
}

TEST(OpMetrics, CountsByResultAndTimes) {
  Registry registry;
  auto& ops = registry.AddCounter("t0fs_test_ops_total", "Ops.", {"op", "result"});
  auto& latency =
      registry.AddHistogram("t0fs_test_op_duration_seconds", "Latency.", {"op"}, {0.001, 1});
  OpMetrics lookup(&ops, &latency, "lookup");
  constexpr int kThreads = 4;
  constexpr int kIters = 20000;
  // Codes 100 and 116 share a cache slot (mod 16): they keep replacing each
  // other and must still be counted exactly.
  const StatusCode codes[] = {StatusCode::kOk, StatusCode::kNotFound, StatusCode::kInvalidArgument,
                              StatusCode::kStale};
  std::vector<std::thread> threads;
  for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
    threads.emplace_back([&] {
      for (int iter = 0; iter < kIters; ++iter) {
        lookup.Record(codes[iter % 4], std::chrono::microseconds(iter % 2 == 0 ? 10 : 5000));
      }
    });
  }
  for (auto& t : threads) t.join();
  const uint64_t each = uint64_t{kThreads} * kIters / 4;
  EXPECT_EQ(ops.With({{"op", "lookup"}, {"result", "ok"}}).Value(), each);
  EXPECT_EQ(ops.With({{"op", "lookup"}, {"result", "not_found"}}).Value(), each);
  EXPECT_EQ(ops.With({{"op", "lookup"}, {"result", "invalid_argument"}}).Value(), each);
  EXPECT_EQ(ops.With({{"op", "lookup"}, {"result", "stale"}}).Value(), each);
  Histogram::Snapshot snap = latency.With({{"op", "lookup"}}).Collect();
  EXPECT_EQ(snap.count, 4 * each);
  EXPECT_EQ(snap.cumulative[0], 2 * each);  // the 10 µs half

  OpMetrics uncounted(nullptr, nullptr, "none");  // both families optional
  uncounted.Record(StatusCode::kNotFound, std::chrono::seconds(1));
}

}  // namespace
}  // namespace t0fs::metrics
