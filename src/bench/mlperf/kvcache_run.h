// The KV-cache run (spec §4.2-4.4): per client (a rank: a thread here, or
// an MPI process), `users` simulated users in an open loop (each thinks
// think·U(0.8,1.2) s, then enqueues a request; multi-turn conversations
// continue with p = 0.8 up to 10 turns), a priority queue (higher QoS
// first) served by min(users, 500) workers. A request: system-prompt
// prefix check (p = 0.2; the prefix entries are never stored, so these
// reads miss, as in the reference) → re-read every previous turn of the
// conversation → prefill write of the context → decode: 1 + ceil(gen/32)
// whole-entry reads (context ≥ 10,000 tokens: prefill only; a miss
// re-writes) → sleep gen × per-token time. Metrics per client, aggregated
// as the rules say (sum over clients; P95 = max).
// A stop request (stop_signal.h) ends a trial like the end of its duration
// (sleeps are cut short): the trial's figures cover the time it ran, and
// KvTrialResult.stopped_early says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/cache_drop.h"
#include "bench/comm.h"
#include "bench/engine.h"
#include "bench/histogram.h"
#include "bench/mlperf/kvcache_config.h"
#include "bench/mlperf/kvcache_tiers.h"
#include "bench/sysstat.h"

namespace t0fs::bench::mlperf {

struct KvRunSpec {
  KvOption option;          // users, duration, tiers, allocs, generation, model
  KvModel model;
  std::string cache_dir;    // clients use <cache_dir>/rank_<r>/
  uint32_t clients = 1;     // in total (threads × MPI processes)
  double scale = 1;         // entry bytes × scale
  uint64_t storage_bytes = 0;  // storage tier capacity (0: 95 % of free)
  uint64_t seed = 42;
  EngineOptions engine;     // buffer_size = transfer
  uint64_t transfer = 16 << 20;
  bool progress = false;
  bool drop_before_read = true;  // fadvise(DONTNEED) before storage reads (--drop-caches)
};

struct KvClientResult {
  uint32_t client = 0;
  double elapsed_s = 0;
  uint64_t requests = 0;
  uint64_t tokens = 0;
  double storage_latency_s = 0;  // Σ per-request latency (all tiers)
  KvStats stats;
  // The reference's per-client metrics.
  double StorageTokensPerSec() const { return storage_latency_s > 0 ? tokens / storage_latency_s : 0; }
  double WallTokensPerSec() const { return elapsed_s > 0 ? tokens / elapsed_s : 0; }
  double ReadGiBps() const { return elapsed_s > 0 ? stats.storage_read_bytes / 1073741824.0 / elapsed_s : 0; }
  double WriteGiBps() const { return elapsed_s > 0 ? stats.storage_write_bytes / 1073741824.0 / elapsed_s : 0; }
  double ReadP95Ms() const { return stats.read_device_ns.Percentile(95) / 1e6; }
  double WriteP95Ms() const { return stats.write_device_ns.Percentile(95) / 1e6; }
};

// One trial: every client's result (rank 0 gets all clients; others theirs).
struct KvTrialResult {
  std::vector<KvClientResult> clients;
  CpuUsage cpu;
  uint64_t peak_rss = 0;
  bool stopped_early = false;
  // The storage reads' page cache: the per-entry fadvise and the pages it
  // left in memory, summed over the clients' reads.
  CacheReport Cache(CacheDropMode requested) const;
  // Aggregation within a trial (R §6.3.4): sums over clients, P95 = max.
  double StorageTokensPerSec() const;
  double WallTokensPerSec() const;
  double ReadGiBps() const;
  double WriteGiBps() const;
  double ReadP95Ms() const;
  double WriteP95Ms() const;
  std::vector<uint32_t> ZeroEntryClients() const;
};

Result<KvTrialResult> RunKvTrial(const KvRunSpec& spec, uint32_t trial, Comm& comm);

}  // namespace t0fs::bench::mlperf
