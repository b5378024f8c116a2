// The thread sweep (`t0fs bench sweep`): iozone's throughput test
// `iozone -i0 -i1 -c -e -w -r 16M -s total/N -t N -+n` for N = 1, 2, 4 …:
// each thread writes then reads its own file of total/N bytes in 16 MiB
// records, with open, fsync and close inside the timing. Reports per N
// "children see" (sum of each thread's own rate) and "parent sees" (all bytes
// over the wall time from the start barrier to the last thread), with
// iozone's stonewall (on by default: when the first thread finishes, the
// others stop at their next record), then the peak and the plateau.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cache_drop.h"
#include "bench/comm.h"
#include "bench/engine.h"
#include "bench/result.h"

namespace t0fs::bench {

struct SweepSpec {
  std::string path;                 // directory
  std::vector<uint32_t> threads;    // ascending
  uint64_t total = 0;               // bytes per thread count, split over threads
  uint64_t record = 16 << 20;
  bool direct = false;
  bool stonewall = true;
  CacheDropMode drop = CacheDropMode::kAuto;  // between write and read (buffered)
  EngineOptions engine;
  uint32_t iodepth = 1;
  bool verify = false;
  bool keep = false;
  uint64_t seed = 0x7430667362656e63ULL;
  bool progress = false;
};

// "1,2,4,8" (explicit) or, when `list` is empty, 1, 2, 4 … up to max (max
// included even if not a power of two).
Result<std::vector<uint32_t>> SweepThreadList(const std::string& list, uint32_t max_threads);

Status ValidateSweepSpec(const SweepSpec& spec);
// Runs the sweep. A stop request (StopRequested()) ends it between records:
// the result holds the thread counts that ran (a curve point only for a
// count whose write and read both completed), marked stopped_early.
Result<RunResult> RunSweep(const SweepSpec& spec, Comm& comm);

// Peak and plateau of a throughput curve (threads ascending). The plateau
// starts at the first thread count from which every later point stays within
// `tolerance` of the peak; it exists when at least two points lie on it.
struct CurveSummary {
  uint32_t peak_threads = 0;
  double peak = 0;
  bool has_plateau = false;
  uint32_t plateau_threads = 0;
  double plateau = 0;  // mean of the points on the plateau
};
CurveSummary AnalyzeCurve(const std::vector<std::pair<uint32_t, double>>& curve,
                          double tolerance = 0.10);
nlohmann::json ToJson(const CurveSummary& s);

}  // namespace t0fs::bench
