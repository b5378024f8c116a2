// datagen: writes a training dataset as the reference generator does (spec
// §2.2): DLIO's names, sizes (RecordDims) and containers (formats.h), random
// incompressible content, file i written by writer i % writers (writers =
// threads × MPI ranks); each file is fsynced so the data is on stable
// storage before a run. A live progress line shows the rate.
// A stop request (stop_signal.h) ends the writers between two writes; the
// files this run created, and one it was rewriting, are then removed: an
// incomplete dataset would look complete to a run (names carry the total).
#pragma once

#include <cstdint>
#include <string>

#include "bench/comm.h"
#include "bench/engine.h"
#include "bench/mlperf/dataset_layout.h"
#include "bench/mlperf/training_config.h"
#include "bench/sysstat.h"

namespace t0fs::bench::mlperf {

struct DatagenSpec {
  TrainingWorkload workload;
  DatasetLayout layout;      // root, ext, total_files, subfolders
  uint32_t threads = 1;      // writers per process
  EngineOptions engine;      // buffer_size = the write size
  bool fsync = true;
  bool progress = false;
  uint64_t seed = 0x6d6c70657266ULL;  // content only (sizes use DLIO's seed 10)
};

struct SizeStats {
  uint64_t files = 0;
  double bytes = 0;
  double sum_sq = 0;
  uint64_t min = UINT64_MAX;
  uint64_t max = 0;
  void Add(uint64_t size);
  double Mean() const;
  double Stdev() const;
};

// The sizes of all N files (pure; no I/O).
SizeStats PlanDatasetSizes(const TrainingWorkload& w, uint64_t files);

struct DatagenResult {
  SizeStats sizes;   // written by all ranks
  double seconds = 0;
  CpuUsage cpu;
  bool stopped_early = false;
  uint64_t removed = 0;  // files removed after the stop (all ranks)
};

Result<DatagenResult> RunDatagen(const DatagenSpec& spec, Comm& comm);
// Free bytes of the file system holding `path`.
Result<uint64_t> FreeBytes(const std::string& path);

}  // namespace t0fs::bench::mlperf
