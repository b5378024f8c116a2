// Configuration of `t0fs data`, the data service of one node.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "metrics/metrics_config.h"

namespace t0fs::data {

struct DataConfig {
  std::string meta = "127.0.0.1:7700";  // meta service address
  std::string secret_file = "secret";    // cluster secret (mode 0600)
  std::string listen = "127.0.0.1:7701";  // TCP chunk service
  // Address other nodes and remote clients use; empty = `listen`. Needed
  // when listening on 0.0.0.0.
  std::string advertise;
  // Unix socket for the local bypass (fd passing); empty = <first volume>/data.sock.
  std::string local_socket;
  std::vector<std::string> volumes = {"volume"};  // directories holding chunk files
  uint64_t node_id = 0;  // 0 = the id recorded in the volumes, or assigned by meta
  // Server threads. Handlers block on disk I/O, so more threads keep more
  // requests in flight on a fast drive, at the cost of memory per thread.
  uint32_t threads = 4;
  Duration heartbeat{std::chrono::seconds(1)};  // how often volume stats and GC acks go to meta
  // Open chunk files kept cached (two descriptors each). Larger saves
  // open() calls on wide workloads; the process limit here is 20000 fds.
  uint32_t open_chunk_cache = 2048;
  ByteSize max_io{16u << 20};  // largest chunk read/write per request
  // Repair copies from peers: parallel copies, and their total bandwidth.
  // More finishes repair sooner, at the cost of client I/O on this node.
  uint32_t copy_threads = 2;
  ByteSize copy_rate{200u << 20};  // bytes/s; 0 = unthrottled
  // Background verification of every chunk: bytes/s spent (0 = off) and
  // the rest between passes. Faster finds silent damage sooner and costs
  // disk bandwidth.
  ByteSize scrub_rate{16u << 20};
  Duration scrub_pause{std::chrono::hours(1)};
  // How often this node offers meta its chunk files, so that meta has the
  // ones no layout uses removed (orphans; `t0fs fsck` names them). 0 = off.
  Duration orphan_sweep{std::chrono::hours(6)};
  // Tolerated clock difference with meta when checking capability expiry.
  Duration clock_skew{std::chrono::seconds(60)};
  std::string io_backend = "auto";  // auto | io_uring | psync
  std::string log_level = "info";
  metrics::MetricsConfig metrics;  // --metrics-listen

  template <class V>
  void Visit(V& v) {
    v("meta", meta, "meta service address (host:port), or several meta servers of one store (host:port,host:port), used in turn when one fails");
    v("secret-file", secret_file, "cluster secret file (mode 0600)");
    v("listen", listen, "host:port for chunk I/O over TCP");
    v("advertise", advertise, "address clients and peers use to reach this node (default: listen)");
    v("local-socket", local_socket, "unix socket for the same-host bypass (default: <volume>/data.sock)");
    v("volumes", volumes, "volume directories holding chunk files");
    v("node-id", node_id, "node id (0: from the volumes or assigned by meta)");
    v("threads", threads, "server threads; more keeps more disk requests in flight");
    v("heartbeat", heartbeat, "interval of heartbeats to meta");
    v("open-chunk-cache", open_chunk_cache, "open chunk files kept cached");
    v("max-io", max_io, "largest chunk read or write per request");
    v("copy-threads", copy_threads, "repair copies in parallel");
    v("copy-rate", copy_rate, "bandwidth of repair copies per second (0: unthrottled)");
    v("scrub-rate", scrub_rate, "bytes per second the scrubber verifies (0: off)");
    v("scrub-pause", scrub_pause, "rest between two scrub passes");
    v("orphan-sweep", orphan_sweep,
      "interval of offering meta this node's chunk files, to remove those no layout uses (0: off)");
    v("clock-skew", clock_skew, "tolerated clock difference with meta for capability expiry");
    v("io-backend", io_backend, "disk I/O backend: auto, io_uring or psync");
    v("log-level", log_level, "trace, debug, info, warn or error");
    metrics.Visit(v);
  }
};

}  // namespace t0fs::data
