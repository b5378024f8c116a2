// IoStats: the counters behind Client::counters(), bumped by the rooms that
// do the I/O (replica I/O, passthrough). Lock-free; a snapshot is not one
// instant across counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "t0fs/client.h"

namespace t0fs::client {

struct IoStats {
  std::atomic<uint64_t> local_read_bytes{0}, local_write_bytes{0}, remote_read_bytes{0},
      remote_write_bytes{0}, local_reads{0}, remote_reads{0}, checksum_errors{0},
      replica_failovers{0}, degraded_reads{0}, degraded_rows{0}, degraded_row_hits{0},
      object_reads{0}, replica_write_failures{0}, stage_back_requests{0}, recall_requests{0},
      read_recall_requests{0}, passthrough_opens{0}, passthrough_rebuilds{0},
      passthrough_overflow_bytes{0};

  IoCounters Snapshot() const {
    IoCounters c;
    c.local_read_bytes = local_read_bytes;
    c.local_write_bytes = local_write_bytes;
    c.remote_read_bytes = remote_read_bytes;
    c.remote_write_bytes = remote_write_bytes;
    c.local_reads = local_reads;
    c.remote_reads = remote_reads;
    c.checksum_errors = checksum_errors;
    c.replica_failovers = replica_failovers;
    c.degraded_reads = degraded_reads;
    c.degraded_rows = degraded_rows;
    c.degraded_row_hits = degraded_row_hits;
    c.object_reads = object_reads;
    c.replica_write_failures = replica_write_failures;
    c.stage_back_requests = stage_back_requests;
    c.recall_requests = recall_requests;
    c.read_recall_requests = read_recall_requests;
    c.passthrough_opens = passthrough_opens;
    c.passthrough_rebuilds = passthrough_rebuilds;
    c.passthrough_overflow_bytes = passthrough_overflow_bytes;
    return c;
  }
};

}  // namespace t0fs::client
