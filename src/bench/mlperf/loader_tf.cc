// The tf.data loader (see loader.h).
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/mlperf/formats.h"
#include "bench/mlperf/loader.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {
namespace {

class TfLoader final : public BatchLoader {
 public:
  explicit TfLoader(const LoaderContext& ctx) : ctx_(ctx) {}
  ~TfLoader() override { Stop(); }

  // Checks that an engine can be made; each stream makes its own (an
  // engine belongs to the thread that uses it, engine.h).
  Status Init() {
    streams_ = std::max<uint32_t>(1, ctx_.workload.read_threads);
    RETURN_IF_ERROR(MakeEngine(ctx_.engine).status());
    latency_.resize(streams_);
    return Status::Ok();
  }

  Status Start(uint32_t, uint64_t steps) override {
    (void)steps;
    const uint32_t batch = ctx_.workload.batch_size;
    capacity_ = uint64_t{batch} * (std::max<uint32_t>(1, ctx_.workload.prefetch_size) + 1);
    pool_ = 0;
    running_ = streams_;
    stop_ = false;
    error_ = Status::Ok();
    for (uint32_t idx = 0; idx < streams_; ++idx) {
      threads_.emplace_back([this, idx] { Stream(idx); });
    }
    return Status::Ok();
  }

  Status Next() override {
    const uint64_t batch = ctx_.workload.batch_size;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return pool_ >= batch || !error_.ok() || running_ == 0; });
    if (!error_.ok()) return error_;
    if (pool_ < batch) return Status(StatusCode::kInternal, "tf loader: out of records");
    pool_ -= batch;
    cv_.notify_all();
    return Status::Ok();
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  Histogram Latency() override {
    Histogram all;
    for (const auto& h : latency_) all.Merge(h);
    return all;
  }

 private:
  // Waits for room for one more record; false when stopping.
  bool PutRecord() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stop_ || pool_ < capacity_; });
    if (stop_) return false;
    ++pool_;
    cv_.notify_all();
    return true;
  }

  void Stream(uint32_t idx) {
    const uint32_t ranks = ctx_.sharding.ranks;
    const uint64_t mine = TfFilesForRank(ctx_.sharding.files, ranks, ctx_.rank);
    auto engine = MakeEngine(ctx_.engine);
    if (!engine.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = engine.status();
      --running_;
      cv_.notify_all();
      return;
    }
    SampleReader reader(**engine, ctx_.read);
    Status st;
    const Status cancelled(StatusCode::kInterrupted, "stopped");
    for (uint64_t j = idx; j < mine && st.ok(); j += streams_) {
      uint64_t file = ctx_.rank + j * ranks;
      TfRecordScanner scanner;
      uint64_t t0 = MonoNanos();
      auto got = reader.ReadWhole(
          ctx_.layout.FilePath(file), [&](const std::byte* data, size_t len) -> Status {
            Count(len, 0);
            if (ctx_.live_bytes) ctx_.live_bytes->fetch_add(len, std::memory_order_relaxed);
            ASSIGN_OR_RETURN(uint64_t records, scanner.Feed(data, len));
            for (uint64_t r = 0; r < records; ++r) {
              if (!PutRecord()) return cancelled;
              Count(0, 1);
              if (ctx_.live_samples) ctx_.live_samples->fetch_add(1, std::memory_order_relaxed);
            }
            return Status::Ok();
          });
      if (!got.ok()) {
        if (got.status().code() == StatusCode::kInterrupted) break;  // Stop()
        st = got.status();
      } else {
        latency_[idx].Record(MonoNanos() - t0);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!st.ok() && error_.ok()) error_ = st;
    --running_;
    cv_.notify_all();
  }

  LoaderContext ctx_;
  uint32_t streams_ = 1;
  std::vector<Histogram> latency_;
  std::vector<std::thread> threads_;
  uint64_t capacity_ = 1;
  std::mutex mu_;  // guards pool_, running_, stop_, error_
  std::condition_variable cv_;
  uint64_t pool_ = 0;  // records read and not yet batched
  uint32_t running_ = 0;
  bool stop_ = false;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<BatchLoader>> MakeTfLoader(const LoaderContext& ctx) {
  auto loader = std::make_unique<TfLoader>(ctx);
  RETURN_IF_ERROR(loader->Init());
  return std::unique_ptr<BatchLoader>(std::move(loader));
}

}  // namespace t0fs::bench::mlperf
