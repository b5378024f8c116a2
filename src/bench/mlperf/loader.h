// Batch loaders: how one emulated accelerator (rank) gets its batches.
//  - Torch (unet3d, retinanet; PyTorch map-style DataLoader): read_threads
//    workers; batch k goes to worker k % W, which reads its batch_size
//    samples one after the other (one whole file each); at most
//    W × ceil(prefetch_size / W) batches are outstanding, as with
//    prefetch_factor; batches are consumed in order. read_threads 0 loads
//    in the rank's own thread. With the native engine (libt0fs BatchIo) a
//    worker reads its batch's files together instead, up to iodepth
//    requests in flight across them (SampleReader::ReadFiles).
//  - TF (resnet50, cosmoflow; tf.data): the rank's files (i % ranks ==
//    rank) are read by read_threads interleaved streams, each file front to
//    back; records (found from the TFRecord framing) fill a bounded pool
//    (batch × (prefetch_size + 1)) from which each step takes a batch.
// Thread safety: Start/Next/Stop from the rank thread; the counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "bench/engine.h"
#include "bench/histogram.h"
#include "bench/mlperf/dataset_layout.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/mlperf/sharding.h"
#include "bench/mlperf/training_config.h"

namespace t0fs::bench::mlperf {

struct LoaderContext {
  TrainingWorkload workload;   // batch, read_threads, prefetch, spf
  DatasetLayout layout;
  ShardingInput sharding;      // files = the files used
  uint32_t rank = 0;
  EngineOptions engine;        // buffer_size / depth set by the loader
  ReadOptions read;
  std::atomic<uint64_t>* live_bytes = nullptr;    // progress counters (shared)
  std::atomic<uint64_t>* live_samples = nullptr;
};

class BatchLoader {
 public:
  virtual ~BatchLoader() = default;
  // Starts fetching the `steps` batches of epoch `epoch` (1-based).
  virtual Status Start(uint32_t epoch, uint64_t steps) = 0;
  // Blocks until the next batch is complete.
  virtual Status Next() = 0;
  // Stops and joins the fetchers (also what they prefetched past the end).
  virtual void Stop() = 0;
  // Bytes and samples read, per-file read latencies, since construction.
  uint64_t bytes() const { return bytes_.load(); }
  uint64_t samples() const { return samples_.load(); }
  virtual Histogram Latency() = 0;

 protected:
  void Count(uint64_t bytes, uint64_t samples) {
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    samples_.fetch_add(samples, std::memory_order_relaxed);
  }
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> samples_{0};
};

Result<std::unique_ptr<BatchLoader>> MakeTorchLoader(const LoaderContext& ctx);
Result<std::unique_ptr<BatchLoader>> MakeTfLoader(const LoaderContext& ctx);
inline Result<std::unique_ptr<BatchLoader>> MakeLoader(const LoaderContext& ctx) {
  return ctx.workload.loader == LoaderKind::kTf ? MakeTfLoader(ctx) : MakeTorchLoader(ctx);
}

}  // namespace t0fs::bench::mlperf
