// The io workload (`t0fs bench io`, and the engine of `ai`): fio/elbencho
// style block I/O on a dataset of files, with worker threads (and MPI ranks),
// a queue depth per thread, size- or time-based runs with a ramp, and
// elbencho's first-done / last-done accounting.
#pragma once

#include <cstdint>
#include <string>

#include "bench/cache_drop.h"
#include "bench/comm.h"
#include "bench/dataset.h"
#include "bench/engine.h"
#include "bench/result.h"

namespace t0fs::bench {

enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kRandRW };
Result<RwMode> ParseRwMode(std::string_view text);
std::string_view RwModeName(RwMode mode);

struct IoSpec {
  std::string path;
  RwMode rw = RwMode::kRead;
  uint32_t rwmixread = 50;      // % reads for randrw
  uint64_t block = 1 << 20;
  uint32_t threads = 1;         // per rank
  uint32_t iodepth = 1;
  bool direct = false;
  uint64_t size = 0;            // see DatasetSpec (per thread or total)
  Split split = Split::kPerThread;
  FileLayout layout = FileLayout::kPerThreadFiles;
  bool layout_given = false;    // else a file PATH picks the shared layout
  uint32_t nrfiles = 1;
  double runtime_s = 0;         // > 0: time-based (loop over the data)
  double ramp_s = 0;            // time-based only: I/O before stats start
  bool end_fsync = false;       // fsync every written file, inside the timing
  EngineOptions engine;
  bool verify = false;
  uint64_t seed = 0x7430667362656e63ULL;
  bool keep = false;            // keep the files the run created
  CacheDropMode drop = CacheDropMode::kAuto;  // before reading (buffered reads only)
  bool progress = false;
  std::string phase_prefix;     // prepended to phase names ("")
};

// Checks the spec (arguments only; no file system access).
Status ValidateIoSpec(const IoSpec& spec);
// The dataset the spec gives with `ranks` MPI ranks, after looking at PATH
// (a file PATH means one shared file): the checks of a run's setup, done
// before anything is written. A --size too small for the layout names the
// smallest valid --size.
Result<DatasetSpec> PlanIoDataset(const IoSpec& spec, uint32_t ranks);
// The smallest --size for which the spec's dataset gives every file at
// least one block and every thread at least one block to work on.
uint64_t MinimumIoSize(const IoSpec& spec, uint32_t ranks);
// An exact size argument that parses back to `bytes`: "2G", "1536M", "4097".
std::string SizeArgument(uint64_t bytes);

// Runs one measurement. Every rank calls it; rank 0's result holds the
// merged figures of all ranks. Files the run created are removed unless
// spec.keep, on success, on failure and when stopped (StopRequested(): the
// workers stop between I/Os and the result holds what ran, marked
// stopped_early).
Result<RunResult> RunIo(const IoSpec& spec, Comm& comm);

// Merges the same phase measured on several ranks: counters add, latency
// histograms merge exactly, last done is the slowest rank, first done the
// fastest (other ranks' bytes at that moment estimated at their mean rate).
PhaseResult MergeRankPhases(const std::vector<PhaseResult>& per_rank);
// Gathers `local` from every rank to rank 0 and merges phase by phase.
Result<RunResult> GatherRun(const RunResult& local, Comm& comm);

}  // namespace t0fs::bench
