// The training run loop (spec §2.4): one rank per emulated accelerator
// (threads of this process; under mpirun, spread over processes), each
// with its own loader (loader.h). Per epoch: the page cache is dropped
// (cache_drop.h), ranks meet on a barrier, then every rank runs `steps`
// steps of: wait for the next batch (load), sleep(computation_time)
// (compute), barrier (the emulated all-reduce; outside compute and proc).
// AU and throughput come from these timings (au_metrics.h).
// A stop request (StopRequested(), stop_signal.h) ends the run between
// steps: the result holds the completed epochs, marked stopped_early (the
// epoch that was cut is not in the metrics).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/comm.h"
#include "bench/histogram.h"
#include "bench/mlperf/au_metrics.h"
#include "bench/cache_drop.h"
#include "bench/mlperf/dataset_layout.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/mlperf/sharding.h"
#include "bench/mlperf/training_config.h"
#include "bench/sysstat.h"

namespace t0fs::bench::mlperf {

struct TrainingSpec {
  TrainingWorkload workload;  // overrides applied
  Edition edition = Edition::k3_0;
  Sharding sharding = Sharding::kV3;
  DatasetLayout layout;
  uint64_t files = 0;          // files used (≤ layout.total_files)
  uint32_t accelerators = 1;   // in total
  uint64_t max_steps = 0;      // total_training_steps (0 = the whole dataset)
  EngineOptions engine;        // kind, depth, native meta/secret
  ReadOptions read;            // transfer size, O_DIRECT, test delay
  CacheDropMode drop = CacheDropMode::kAuto;
  bool progress = false;
};

struct EpochInfo {
  uint32_t epoch = 0;          // 1-based
  double seconds = 0;          // slowest rank's block time
  double au_pct = 0;           // mean over ranks
  double throughput = 0;       // sum over ranks
  double compute_mean_s = 0;   // per step, over ranks
  double compute_stdev_s = 0;
  double load_mean_s = 0;
  std::string start, end;      // ISO 8601
  std::string cache_note;      // "page cache dropped with ...; 0.0 % ... resident"
};

struct TrainingResult {
  uint64_t steps_per_epoch = 0;
  RunMetrics metrics;          // rank 0 only (other processes: empty)
  std::vector<EpochInfo> epochs;
  uint64_t bytes = 0;          // read, all ranks
  uint64_t samples = 0;
  Histogram latency;           // per file read, ns (all ranks)
  CpuUsage cpu;                // this process over the run
  double cpu_seconds = 0;      // user+sys, all processes
  uint64_t peak_rss = 0;
  double wall_s = 0;
  std::string start, end;
  int hosts = 1;
  CacheReport cache;           // the epochs' drops, merged
  bool stopped_early = false;  // epochs: the completed ones
  // CPU seconds per simulated accelerator-second: cpu_seconds / (accelerators × wall).
  double CpuPerAcceleratorSecond(uint32_t accelerators) const {
    return wall_s > 0 ? cpu_seconds / (accelerators * wall_s) : 0;
  }
};

// Checks the spec (no I/O): steps, divisibility over processes.
Status ValidateTrainingSpec(const TrainingSpec& spec, int processes);
uint64_t TrainingSteps(const TrainingSpec& spec);

// Every process calls it; `on_epoch` runs on rank 0 after each epoch.
Result<TrainingResult> RunTraining(const TrainingSpec& spec, Comm& comm,
                                   const std::function<void(const EpochInfo&)>& on_epoch);

std::string IsoNow();

}  // namespace t0fs::bench::mlperf
