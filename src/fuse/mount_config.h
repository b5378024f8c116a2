// MountConfig: the knobs of a t0fs FUSE mount (the [mount] section of the
// config file; `t0fs mount --help` lists them). Defaults live here.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/config.h"
#include "common/status.h"
#include "metrics/metrics_config.h"

namespace t0fs::fuse {

struct MountConfig {
  // Worker threads, each reading requests from its own clone of the /dev/fuse
  // fd. A worker blocks in one Client call at a time, so this bounds the
  // requests in flight. More hides meta/data latency; each costs ~2 MiB of
  // buffers and adds contention on a 2-core host.
  uint32_t threads = 4;
  // How long the kernel may cache attributes and names before asking again
  // when other clients' changes are not heard (cache_timeout below is 0, or
  // a meta server is unreachable). Longer means fewer GETATTR/LOOKUP round
  // trips and a staler view of other clients' changes.
  Duration attr_timeout{std::chrono::seconds(1)};
  Duration entry_timeout{std::chrono::seconds(1)};
  // How long "no such name" may be cached. 0 asks meta every time; longer
  // speeds up PATH-style searches but hides files created by other clients.
  Duration negative_timeout{std::chrono::milliseconds(0)};
  // The cache time of names, missing names and attributes while the mount
  // hears of every other client's change: it asks each meta server every
  // `change_interval` and tells the kernel what to forget, so another
  // client's create, rename, removal, chmod or write is seen within about
  // that interval. The times above apply when it cannot hear (a meta server
  // unreachable); an attribute or entry time of 0 is 0 here too (never
  // cached). 0 turns this off (the times above always).
  Duration cache_timeout{std::chrono::seconds(30)};
  Duration change_interval{std::chrono::milliseconds(250)};
  // Let users other than the mounter use the mount (needs root or
  // user_allow_other in /etc/fuse.conf). Permissions are still checked.
  bool allow_other = false;
  // Mount flags: read-only (writes fail with EROFS) and no execution of
  // programs from the mount. Always nosuid and nodev.
  bool read_only = false;
  bool no_exec = false;
  // Upper bound for kernel readahead per file: how far ahead of a
  // sequential reader the kernel keeps READs (1 MiB each at most) in flight,
  // for files not served by passthrough (a remote or replicated file; a
  // passthrough file follows its drive's readahead). 8 MiB, as CephFS's
  // rasize: one sequential reader of a remote file read 1.18× as fast as
  // with 1 MiB, with less CPU per GB (docs/performance.md). The cost: a random
  // mmap reader's first faults read that much around each fault (the
  // kernel stops after ~100 misses). Applied through INIT and, as root, the
  // mount's bdi.
  ByteSize max_readahead{8u << 20};
  // Asynchronous requests (readahead, async direct I/O) the kernel keeps in
  // flight. More keeps all workers busy on big sequential reads; fewer bounds
  // the memory pinned by queued requests.
  uint32_t max_background = 64;
  // Log every request and its answer at trace level (needs log level trace).
  // Costs a formatted log line per request.
  bool debug = false;
  // Kernel FUSE passthrough (Linux 6.9+, run as root): a file whose data is
  // one chunk on this node is served by the kernel from that chunk file, at
  // the local drive's speed (writes too when it has one replica). Off sends
  // every read and write through this process (for comparison).
  bool passthrough = true;
  // FUSE over io_uring (Linux 6.14+, when root turned on the fuse module's
  // enable_uring parameter): requests and answers pass through per-CPU
  // io_uring queues, one system call per request instead of a read and a
  // write. Used when the kernel offers it; false keeps /dev/fuse reads.
  bool io_uring = true;
  // The mount's /metrics endpoint (FUSE ops and latency, client bytes by
  // path local/remote, process); --metrics-listen.
  metrics::MetricsConfig metrics;
  // Where that endpoint was bound (host:port; "" disabled): set by the
  // mount command once it listens, not an option. The mount's state
  // (`t0fs status`) reports it.
  std::string metrics_address;

  template <class V>
  void Visit(V& v) {
    v("threads", threads, "worker threads serving requests (in-flight bound)");
    v("attr-timeout", attr_timeout,
      "kernel attribute cache time when changes are not heard; longer = fewer GETATTR, staler; 0 = "
      "never cached");
    v("entry-timeout", entry_timeout,
      "kernel name cache time when changes are not heard; longer = fewer LOOKUP, staler; 0 = never "
      "cached");
    v("negative-timeout", negative_timeout, "cache time of missing names; 0 = always ask");
    v("cache-timeout", cache_timeout,
      "kernel cache time while other clients' changes are heard (invalidation); 0 = off, use the times above");
    v("change-interval", change_interval, "how often meta servers are asked for other clients' changes");
    v("allow-other", allow_other, "let other users access the mount (permissions still apply)");
    v("read-only", read_only, "mount read-only (mount option ro)");
    v("no-exec", no_exec, "do not allow executing programs from the mount (mount option noexec)");
    v("max-readahead", max_readahead,
      "kernel readahead window of files not served by passthrough; bigger = more 1 MiB reads in "
      "flight for a sequential reader");
    v("max-background", max_background, "async requests in flight; more = deeper readahead");
    v("debug", debug, "trace every FUSE request (log level trace)");
    v("io-uring", io_uring, "take requests through FUSE-over-io_uring queues when the kernel offers it (Linux 6.14+, enable_uring)");
    v("passthrough", passthrough, "let the kernel serve files whose data is one local chunk (Linux 6.9+, root)");
    metrics.Visit(v);
  }

  Status Validate() const;
};

inline Status MountConfig::Validate() const {
  if (threads == 0 || threads > 256) {
    return Status(StatusCode::kInvalidArgument, "mount threads must be 1..256");
  }
  if (max_background == 0 || max_background > 65535) {
    return Status(StatusCode::kInvalidArgument, "mount max-background must be 1..65535");
  }
  if (cache_timeout.value.count() > 0 &&
      (change_interval.value.count() < 10 || change_interval.value > std::chrono::seconds(10))) {
    return Status(StatusCode::kInvalidArgument, "mount change-interval must be 10ms..10s");
  }
  if (max_readahead.bytes > (uint64_t(1) << 30)) {
    return Status(StatusCode::kInvalidArgument, "mount max-readahead must be at most 1G");
  }
  return Status::Ok();
}

}  // namespace t0fs::fuse
