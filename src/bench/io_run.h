// The io workload's run, private to it and shared by its two files:
// io_workload.cc drives a run (prepare, lay out, start the workers, progress,
// the verify pass, the phases); io_worker.cc is the per-thread I/O loop and
// the post-write verify pass.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "bench/comm.h"
#include "bench/dataset.h"
#include "bench/dataset_files.h"
#include "bench/engine.h"
#include "bench/histogram.h"
#include "bench/io_spec.h"
#include "bench/result.h"
#include "bench/start_gate.h"
#include "common/status.h"

namespace t0fs::bench::internal {

inline bool HasReads(RwMode m) {
  return m == RwMode::kRead || m == RwMode::kRandRead || m == RwMode::kRandRW;
}
inline bool HasWrites(RwMode m) {
  return m == RwMode::kWrite || m == RwMode::kRandWrite || m == RwMode::kRandRW;
}
inline bool IsRandom(RwMode m) {
  return m == RwMode::kRandRead || m == RwMode::kRandWrite || m == RwMode::kRandRW;
}

// Counters a worker publishes while it runs (read by the progress line and
// by the first-done snapshot). Only the owner writes.
struct alignas(64) LiveCounters {
  std::atomic<uint64_t> read_bytes{0}, read_ops{0}, write_bytes{0}, write_ops{0};
  std::atomic<uint64_t> any_bytes{0}, any_ops{0};  // including the ramp
};

struct WorkerOutput {
  Histogram read_lat, write_lat;
  uint64_t finish_ns = 0;
  uint64_t issued_blocks = 0;  // for the post-write verify pass
  uint64_t verify_errors = 0;
  Status status;
};

struct FirstDone {
  std::atomic<bool> taken{false};
  uint64_t ns = 0;
  DonePoint read, write;
};

class IoRun {
 public:
  IoRun(const IoSpec& spec, Comm& comm) : spec_(spec), comm_(comm) {}

  Result<RunResult> Run();

 private:
  Status Prepare();
  void Worker(uint32_t local_idx);
  Status DoWork(uint32_t local_idx, Engine& engine, const std::vector<int>& handles,
                WorkerOutput& out);
  void VerifyWorker(uint32_t local_idx, WorkerOutput& out);
  void Fail(const Status& st);
  void SnapshotFirstDone(uint64_t now);
  uint32_t GlobalThread(uint32_t local_idx) const {
    return static_cast<uint32_t>(comm_.rank()) * spec_.threads + local_idx;
  }

  const IoSpec& spec_;
  Comm& comm_;
  DatasetPlan plan_;
  DatasetFiles files_;
  std::unique_ptr<LiveCounters[]> live_;
  std::vector<WorkerOutput> outputs_;
  StartGate gate_;
  FirstDone first_;
  std::atomic<bool> abort_{false};
  std::mutex error_mu_;  // guards error_
  Status error_;
  uint64_t start_ns_ = 0, measure_ns_ = 0, end_ns_ = 0;
};

}  // namespace t0fs::bench::internal
