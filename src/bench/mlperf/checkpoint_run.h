// The checkpointing run (spec §3.2): `writes` checkpoints then `reads`
// restores, each preceded by time_between seconds of sleep and a barrier of
// all ranks; every rank writes (reads) its own files, one fsync at each
// file's close, posix_fadvise(DONTNEED) after it (v3.0 writer); per-rank
// spans from the barrier to the rank's last file. Figures under both
// definitions: rank 0's span (what DLIO measures) and the slowest rank's
// (what the rules text says), plus per-rank GiB/s.
// `scale` < 1 shrinks every file (rounded up to 4 KiB) so the run fits a
// small machine; the full-size byte counts are still reported.
// A stop request (stop_signal.h) ends the run between two I/Os (and cuts the
// sleeps short): the result holds the checkpoints every rank completed,
// marked stopped_early, and the files are removed as at a normal end.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/comm.h"
#include "bench/engine.h"
#include "bench/histogram.h"
#include "bench/cache_drop.h"
#include "bench/mlperf/checkpoint_model.h"
#include "bench/sysstat.h"

namespace t0fs::bench::mlperf {

struct CheckpointSpec {
  CheckpointPlan plan;
  std::string folder;            // files go to <folder>/<model>/global_epoch1_step<k>/
  uint32_t writes = 10;
  uint32_t reads = 10;
  double time_between_s = 5;
  double scale = 1;
  EngineOptions engine;          // kind, depth; buffer_size = transfer (capped per file)
  uint64_t transfer = 32 << 20;
  bool direct = false;
  CacheDropMode drop = CacheDropMode::kAuto;
  double host_memory_gib = 0;    // for the client-cache advisory
  bool keep = false;
  bool progress = false;
};

struct CheckpointOp {
  uint32_t step = 0;                  // k of global_epoch1_step<k>
  std::vector<double> rank_seconds;   // per rank (all ranks)
  uint64_t bytes = 0;                 // written/read by all ranks
  double Rank0() const { return rank_seconds.empty() ? 0 : rank_seconds[0]; }
  double Slowest() const;
  double Fastest() const;
};

struct PhaseSummary {
  double gibps_rank0_mean = 0, gibps_rank0_stdev = 0;      // DLIO: size / rank-0 duration
  double gibps_slowest_mean = 0, gibps_slowest_stdev = 0;  // rules: size / max duration
  double duration_rank0_mean = 0, duration_rank0_stdev = 0;
  double duration_slowest_mean = 0, duration_slowest_stdev = 0;
  double rank_gibps_min = 0, rank_gibps_mean = 0, rank_gibps_max = 0;  // per-rank bytes/span
};

struct CheckpointResult {
  std::vector<CheckpointOp> writes, reads;
  uint64_t bytes_per_checkpoint = 0;       // as written (scaled)
  uint64_t full_bytes_per_checkpoint = 0;  // the model's real size
  uint64_t files_per_checkpoint = 0;
  std::vector<uint64_t> rank_bytes;       // per rank and checkpoint (scaled)
  Histogram write_latency, read_latency;   // per file (ns), this process
  CpuUsage write_cpu, read_cpu;
  std::string cache_note;                  // between the phases ("page cache dropped ...")
  CacheReport cache;                       // the same, for the result
  bool stopped_early = false;
  std::string advisory;                    // the client-cache rule
  double gap_s = 0;                        // write end -> read start
  uint64_t peak_rss = 0;
  PhaseSummary Summarize(bool write) const;
};

uint64_t ScaledBytes(uint64_t bytes, double scale);

Result<CheckpointResult> RunCheckpointing(
    const CheckpointSpec& spec, Comm& comm,
    const std::function<void(bool write, const CheckpointOp&, uint32_t of)>& on_checkpoint);

}  // namespace t0fs::bench::mlperf
