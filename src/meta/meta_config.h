// Configuration of `t0fs meta`, the metadata service.
#pragma once

#include <string>

#include "common/config.h"
#include "meta/store/pg/pg_options.h"
#include "metrics/metrics_config.h"

namespace t0fs::meta {

// The object tier (S3: AWS, Ceph RGW, MinIO) that protect=object copies
// chunks to. Meta deletes objects the cluster no longer needs; data nodes
// upload and recall (they are told the endpoint, bucket and region at
// registration and read the credentials file at the same path).
struct ObjectTierConfig {
  std::string endpoint;  // http://host:port; empty: no object tier
  std::string bucket;
  std::string region = "us-east-1";
  std::string credentials;  // a file of mode 0600: access_key = ... / secret_key = ...
  // Key prefix of this cluster's objects; empty: t0fs/<cluster id>/.
  std::string prefix;
  // How often meta writes the bucket's manifest (meta/object_manifest.h)
  // when uploads or deletions happened since; 0: never.
  Duration manifest_interval{std::chrono::minutes(10)};

  bool enabled() const { return !endpoint.empty(); }
  template <class V>
  void Visit(V& v) {
    v("object-endpoint", endpoint,
      "S3 endpoint of the object tier (http://host:port) that protect=object copies to; "
      "empty: none");
    v("object-bucket", bucket, "the object tier's bucket (created beforehand)");
    v("object-region", region, "the object tier's region (part of the request signature)");
    v("object-credentials", credentials,
      "file (mode 0600, same path on every data node) with access_key = and secret_key = "
      "lines for the object tier");
    v("object-prefix", prefix, "key prefix of this cluster's objects (default t0fs/CLUSTER-ID/)");
    v("object-manifest-interval", manifest_interval,
      "how often meta writes PREFIX/manifest.jsonl (the files in the bucket, by path) when "
      "objects were uploaded or deleted since (0 = never)");
  }
};

struct MetaConfig {
  std::string listen = "127.0.0.1:7700";
  // The metadata store, by URL (meta/store/store_url.h); empty: from `db`.
  std::string store;
  std::string db;                        // older form: a SQLite file, sqlite://db; neither: meta.db
  std::string secret_file = "secret";    // cluster secret (mode 0600)
  // Server threads. Metadata operations are short but serialise on the
  // store's writer lock; more threads mostly help concurrent reads.
  uint32_t threads = 4;
  // Chunk size of new files. Large chunks keep a file's data in few chunk
  // files (fewer layout rows, local files usable whole); small chunks spread
  // a file over more nodes and repair in finer pieces.
  ByteSize chunk_size{64u << 20};
  // Chunk size of new files under placement=local (Tier 0) when the
  // directory sets none: large, so that a file's data stays in one chunk file
  // on the writer's node and the mount can hand that file to the kernel
  // (FUSE passthrough). The cost: such a file is repaired and rebalanced as
  // one unit, and its data is never striped over nodes. 0 = chunk-size.
  ByteSize local_chunk_size{uint64_t{64} << 30};
  // A client session not renewed within this is closed: its open handles are
  // released (unlinked files freed). Longer tolerates longer client stalls.
  Duration session_lease{std::chrono::seconds(60)};
  // A node without a heartbeat for `suspect-after` is suspect (still used),
  // for `node-timeout` it is down (not used for new data or reads).
  Duration suspect_after{std::chrono::seconds(3)};
  Duration node_timeout{std::chrono::seconds(10)};
  // How long a down node's replicas still count before repair copies them
  // elsewhere. Longer avoids copying for a node that is only rebooting;
  // shorter restores redundancy sooner.
  Duration repair_grace{std::chrono::seconds(60)};
  Duration repair_interval{std::chrono::seconds(2)};  // how often the planner looks at every chunk
  // Copies in flight per target node; more repairs faster, competes more
  // with client I/O.
  uint32_t copies_per_node = 2;
  Duration copy_timeout{std::chrono::minutes(10)};  // a copy without progress that long is retried
  // How often each erasure-coded stripe's parity is checked against its
  // data (a read of the replica and of every cell); 0 = never.
  Duration ec_verify_interval{std::chrono::hours(24 * 7)};
  // keep-local=pressure: on a volume fuller than tier-high-watermark (% of
  // its size), the local copies of protected files are offloaded, least
  // recently changed first, until it is below tier-low-watermark.
  uint32_t tier_high_watermark = 90;
  uint32_t tier_low_watermark = 80;
  // Lifetime of chunk capabilities handed out with layouts. Longer means
  // fewer layout refreshes; shorter revokes access sooner.
  Duration capability_ttl{std::chrono::minutes(10)};
  Duration heartbeat{std::chrono::seconds(1)};  // interval asked of data nodes
  std::string sync = "normal";  // SQLite synchronous for ordinary ops: normal | full (fsync commits are always full)
  std::string sqlite_checkpoint = "background";  // SQLite WAL checkpoints: background | inline
  ByteSize sqlite_reserve{64ull << 20};          // disk kept back for metadata writes (0: none)
  std::string log_level = "info";
  PgOptions pg;                    // --pg-* (a postgresql:// store)
  metrics::MetricsConfig metrics;  // --metrics-listen
  ObjectTierConfig object;         // --object-*

  template <class V>
  void Visit(V& v) {
    v("listen", listen, "host:port the meta service listens on");
    v("store", store,
      "metadata store URL: sqlite:///abs/path.db, sqlite://rel/path.db, sqlite::memory: "
      "(default sqlite://meta.db), or postgresql://user@host:5432/db (several meta servers may "
      "share a PostgreSQL store; a password belongs in ~/.pgpass or PGPASSFILE, not the URL)");
    v("db", db, "metadata database file (SQLite); same as --store sqlite://PATH");
    v("secret-file", secret_file, "cluster secret file (mode 0600)");
    v("threads", threads, "server threads");
    v("chunk-size", chunk_size, "chunk size of new files (placement=spread)");
    v("local-chunk-size", local_chunk_size,
      "chunk size of new files under placement=local: one chunk file per file up to this size "
      "makes it FUSE-passthrough eligible (0 = chunk-size)");
    v("session-lease", session_lease, "client sessions expire after this without renewal");
    v("suspect-after", suspect_after, "a node is suspect after this long without a heartbeat");
    v("node-timeout", node_timeout, "a node is down after this long without a heartbeat");
    v("repair-grace", repair_grace, "a down node's replicas are re-created elsewhere after this");
    v("repair-interval", repair_interval, "how often the repair planner scans the chunks");
    v("copies-per-node", copies_per_node, "repair copies in flight per target node");
    v("copy-timeout", copy_timeout,
      "a repair copy that makes no progress for this long is retried");
    v("ec-verify-interval", ec_verify_interval,
      "how often each erasure-coded stripe's cells are checked against its data (0 = never)");
    v("tier-high-watermark", tier_high_watermark,
      "keep-local=pressure: a volume fuller than this (% of its size) has the local copies of "
      "protected files offloaded, least recently changed first");
    v("tier-low-watermark", tier_low_watermark,
      "keep-local=pressure: offloading stops once the volume is below this (% of its size)");
    v("capability-ttl", capability_ttl, "lifetime of chunk capabilities");
    v("heartbeat", heartbeat, "heartbeat interval asked of data nodes");
    v("sync", sync, "SQLite synchronous mode for ordinary operations: normal or full");
    v("sqlite-checkpoint", sqlite_checkpoint,
      "SQLite WAL checkpoints: background (a thread of their own, off the requests' path) or "
      "inline (SQLite's automatic checkpoint, inside the commit that fills the log)");
    v("sqlite-reserve", sqlite_reserve,
      "disk space kept back in a file next to the SQLite database (DB.reserve) and released "
      "when that disk is full, so that metadata writes, the deletions that free space among "
      "them, go on; taken again once 4x its size is free (0: none)");
    v("log-level", log_level, "trace, debug, info, warn or error");
    pg.Visit(v);
    metrics.Visit(v);
    object.Visit(v);
  }
};

}  // namespace t0fs::meta
