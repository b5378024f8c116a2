// Accelerator utilisation and throughput, exactly as DLIO computes them
// (spec §2.5), per edition:
//   per rank and block, with step lists compute[i] (the sleep), proc[i]
//   (load wait + compute) and the block's wall time T:
//     AU          = Σ compute[1:] / (T − proc[0])                (all editions)
//     throughput  v1.0: N·batch / T
//                 v2.0: (N − 2)·batch / (T − proc[0])
//                 v3.0: (N − 1)·batch / (T − proc[0])  (0 for an empty window)
//   an epoch's value per rank = step-weighted mean over its blocks;
//   train_au[e] = mean over ranks, train_throughput[e] = sum over ranks;
//   the run's AU = mean over epochs (population stdev, as numpy.std);
//   pass iff mean AU ≥ min_au × 100; I/O MiB/s = throughput × record_length / 2^20.
// Pure functions; unit-tested against hand-computed cases.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/mlperf/edition.h"

namespace t0fs::bench::mlperf {

struct BlockMetrics {
  double au = 0;          // fraction
  double throughput = 0;  // samples/s
  uint64_t steps = 0;
};

// One rank's block. `compute_s` and `proc_s` have one entry per step.
BlockMetrics ComputeBlock(std::span<const double> compute_s, std::span<const double> proc_s,
                          double block_s, uint32_t batch, Edition edition);
// Step-weighted mean of a rank's blocks in one epoch.
BlockMetrics CombineBlocks(std::span<const BlockMetrics> blocks);

struct RunMetrics {
  std::vector<double> au_pct;      // per epoch, mean over ranks
  std::vector<double> throughput;  // per epoch, sum over ranks (samples/s)
  double au_mean_pct = 0;
  double au_stdev_pct = 0;
  double throughput_mean = 0;
  double throughput_stdev = 0;
  double io_mean_mib = 0;   // train_io_mean_MB_per_second (MiB/s)
  double io_stdev_mib = 0;
  bool pass = false;        // train_au_meet_expectation == "success"
};

// per_rank[r][e] = rank r's metrics for epoch e.
RunMetrics AggregateRun(const std::vector<std::vector<BlockMetrics>>& per_rank,
                        double record_length, double min_au);

double Mean(std::span<const double> values);
double PopulationStdev(std::span<const double> values);

}  // namespace t0fs::bench::mlperf
