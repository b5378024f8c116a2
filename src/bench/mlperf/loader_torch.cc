// The PyTorch map-style loader (see loader.h).
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/mlperf/loader.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {
namespace {

class TorchLoader final : public BatchLoader {
 public:
  explicit TorchLoader(const LoaderContext& ctx) : ctx_(ctx) {}
  ~TorchLoader() override { Stop(); }

  // Checks that an engine can be made (a clear error before the run starts);
  // the fetchers make their own: an engine belongs to the thread that uses
  // it (engine.h; io_uring rings are single-issuer).
  Status Init() {
    uint32_t workers = std::max<uint32_t>(1, ctx_.workload.read_threads);
    RETURN_IF_ERROR(MakeEngine(ctx_.engine).status());
    engines_.resize(workers);
    latency_.resize(workers);
    return Status::Ok();
  }

  Status Start(uint32_t epoch, uint64_t steps) override {
    order_ = EpochOrder::Make(ctx_.sharding, ctx_.rank, epoch);
    steps_ = steps;
    consumed_ = 0;
    stop_ = false;
    error_ = Status::Ok();
    const uint32_t w = ctx_.workload.read_threads;
    const uint32_t per_worker =
        w == 0 ? 1 : std::max<uint32_t>(1, (ctx_.workload.prefetch_size + w - 1) / w);
    capacity_ = std::max<uint32_t>(1, w) * per_worker;
    ready_.assign(capacity_, 0);
    if (w == 0) {  // the rank's own thread loads: its engine, made here
      ASSIGN_OR_RETURN(engines_[0], MakeEngine(ctx_.engine));
    }
    for (uint32_t idx = 0; idx < w; ++idx) {
      threads_.emplace_back([this, idx] { Worker(idx); });
    }
    return Status::Ok();
  }

  Status Next() override {
    const uint64_t k = consumed_;
    if (ctx_.workload.read_threads == 0) {  // loaded by the rank itself
      RETURN_IF_ERROR(LoadBatch(0, k));
      ++consumed_;
      return Status::Ok();
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return ready_[k % capacity_] == k + 1 || !error_.ok(); });
    if (!error_.ok()) return error_;
    ++consumed_;
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
    if (ctx_.workload.read_threads == 0 && !engines_.empty()) engines_[0].reset();
  }

  Histogram Latency() override {
    Histogram all;
    for (const auto& h : latency_) all.Merge(h);
    return all;
  }

 private:
  Status LoadBatch(uint32_t worker, uint64_t k) {
    SampleReader reader(*engines_[worker], ctx_.read);
    const uint32_t batch = ctx_.workload.batch_size;
    const uint32_t spf = std::max<uint32_t>(1, ctx_.workload.samples_per_file);
    if (ctx_.engine.kind == EngineKind::kNative) return LoadBatchTogether(reader, worker, k);
    for (uint32_t j = 0; j < batch; ++j) {
      uint64_t sample = order_.SampleAt(k * batch + j);
      uint64_t t0 = MonoNanos();
      ASSIGN_OR_RETURN(uint64_t got, reader.ReadWhole(ctx_.layout.FilePath(sample / spf)));
      latency_[worker].Record(MonoNanos() - t0);
      Count(got, 1);
      if (ctx_.live_bytes) ctx_.live_bytes->fetch_add(got, std::memory_order_relaxed);
      if (ctx_.live_samples) ctx_.live_samples->fetch_add(1, std::memory_order_relaxed);
    }
    return Status::Ok();
  }

  // The native engine (libt0fs BatchIo): the batch's files are read
  // together, --iodepth requests in flight across them, where a DataLoader
  // worker would read them one after the other; small samples then do not
  // leave the worker with one request in flight.
  Status LoadBatchTogether(SampleReader& reader, uint32_t worker, uint64_t k) {
    const uint32_t batch = ctx_.workload.batch_size;
    const uint32_t spf = std::max<uint32_t>(1, ctx_.workload.samples_per_file);
    std::vector<std::string> paths;
    paths.reserve(batch);
    for (uint32_t sample_idx = 0; sample_idx < batch; ++sample_idx) {
      paths.push_back(ctx_.layout.FilePath(order_.SampleAt(k * batch + sample_idx) / spf));
    }
    auto file_done = [&](size_t, uint64_t bytes, uint64_t nanos) {
      latency_[worker].Record(nanos);
      Count(bytes, 1);
      if (ctx_.live_bytes) ctx_.live_bytes->fetch_add(bytes, std::memory_order_relaxed);
      if (ctx_.live_samples) ctx_.live_samples->fetch_add(1, std::memory_order_relaxed);
    };
    return reader.ReadFiles(paths, file_done).status();
  }

  void Worker(uint32_t idx) {
    const uint32_t w = ctx_.workload.read_threads;
    auto engine = MakeEngine(ctx_.engine);
    if (!engine.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = engine.status();
      cv_.notify_all();
      return;
    }
    engines_[idx] = std::move(engine).value();
    Fetch(idx, w);
    engines_[idx].reset();
  }

  void Fetch(uint32_t idx, uint32_t w) {
    for (uint64_t k = idx; k < steps_; k += w) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || k < consumed_ + capacity_; });
        if (stop_) return;
      }
      Status st = LoadBatch(idx, k);
      std::lock_guard<std::mutex> lock(mu_);
      if (!st.ok()) {
        if (error_.ok()) error_ = st;
        cv_.notify_all();
        return;
      }
      ready_[k % capacity_] = k + 1;
      cv_.notify_all();
    }
  }

  LoaderContext ctx_;
  std::vector<std::unique_ptr<Engine>> engines_;  // [idx]: owned by fetcher idx's thread
  std::vector<Histogram> latency_;  // per worker
  std::vector<std::thread> threads_;
  EpochOrder order_;
  uint64_t steps_ = 0;
  uint32_t capacity_ = 1;
  std::mutex mu_;  // guards consumed_, ready_, stop_, error_
  std::condition_variable cv_;
  uint64_t consumed_ = 0;
  std::vector<uint64_t> ready_;  // ready_[k % capacity] == k + 1: batch k loaded
  bool stop_ = false;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<BatchLoader>> MakeTorchLoader(const LoaderContext& ctx) {
  auto loader = std::make_unique<TorchLoader>(ctx);
  RETURN_IF_ERROR(loader->Init());
  return std::unique_ptr<BatchLoader>(std::move(loader));
}

}  // namespace t0fs::bench::mlperf
