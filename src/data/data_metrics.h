// The data service's metrics (docs/operations.md has the table).
//
// Chunk traffic is counted in the handlers (one relaxed add per request) by
// transport: "tcp" is what remote clients and peers moved over the network;
// "unix" is I/O sent over the same-host socket instead of the bypass. The
// bypass itself moves bytes in the client (pread/pwrite on descriptors this
// service handed out), so the data service counts the descriptors
// (t0fs_data_local_opens_total) and the client counts the bytes
// (t0fs_client_bytes_total{path="local"}).
//
// Volumes, copies and the node id are read at scrape time from where they
// already live (callback families): no second bookkeeping.
#pragma once

#include <functional>
#include <vector>

#include "data/chunk_store.h"
#include "data/object_read_ahead.h"
#include "data/volume.h"
#include "metrics/registry.h"

namespace t0fs::data {

// Counters the chunk handlers add to; any may be null (not counted).
struct ChunkTraffic {
  metrics::Counter* tcp_read_bytes = nullptr;
  metrics::Counter* tcp_write_bytes = nullptr;
  metrics::Counter* unix_read_bytes = nullptr;
  metrics::Counter* unix_write_bytes = nullptr;
  metrics::Counter* local_opens = nullptr;
};

// Registers t0fs_data_bytes_total{op, transport} and
// t0fs_data_local_opens_total, and returns their children.
ChunkTraffic AddChunkTrafficMetrics(metrics::Registry& registry);

// Counters of removals and of the orphan sweep (DataService).
struct RemovalCounters {
  metrics::Counter* deferred = nullptr;        // removals left for a later heartbeat
  metrics::Counter* orphans_queued = nullptr;  // files the sweep had meta queue
};
RemovalCounters AddRemovalMetrics(metrics::Registry& registry);

// Registers the per-volume gauges (chunks, capacity, available) and the
// copy and node families. `volumes`, `store` and whatever `copied_bytes` and
// `node` read must outlive the registry's server.
// Registers the counters of reads through the object tier: those answered
// from bytes read ahead, and the ranged GETs made.
void AddObjectReadMetrics(metrics::Registry& registry, const ObjectReadAhead& read_ahead);

void AddVolumeMetrics(metrics::Registry& registry, const std::vector<Volume>& volumes, const ChunkStore& store,
                      std::function<uint64_t()> copied_bytes, std::function<uint64_t()> node);

}  // namespace t0fs::data
