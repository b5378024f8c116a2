// AdminClient: libt0fs's administrative view of a cluster — the objective
// of a tree (get/set, with its settings parsed and validated here, once),
// the layout of a file, the cluster's status (nodes, volumes, counts, repair
// backlog), draining a node, and fsck (meta's own check, the chunk files of
// every data node compared with meta's layouts) — for the CLI's admin
// commands and other front ends. It speaks to meta, and to data nodes for
// their chunk listings, as "admin" (no session: it opens no files and holds
// nothing). No wire type appears here: the records are plain structs.
//
// Where the cluster is (meta address, secret) is the caller's to find
// (cli/admin.h LocateCluster).
//
// Thread safety: one AdminClient per thread (calls are not serialised).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "t0fs/client.h"

namespace t0fs::client {

// Where new chunks of a tree go (the wire's Placement, same numbers).
enum class Placement : uint32_t {
  kLocal = 0,   // the first replica on the writer's node
  kSpread = 1,  // by free space and load alone
};

// The protection reached in the background after the writer's copies (the
// wire's ProtectKind and KeepLocal, same numbers; docs/operations.md, the
// durability ladder).
enum class ProtectKind : uint32_t { kNone = 0, kReplicas = 1, kEc = 2, kObject = 3 };
enum class KeepLocal : uint32_t { kKeep = 0, kDrop = 1, kPressure = 2 };
struct Protection {
  ProtectKind kind = ProtectKind::kNone;
  uint32_t copies = 0;    // kReplicas: replicas in all; kEc: data cells K
  uint32_t parity = 0;    // kEc: parity cells M
  uint32_t within_s = 0;  // the deadline, seconds after the file last changed
  KeepLocal keep_local = KeepLocal::kKeep;
  // keep-local=drop: not before the file has gone this long unchanged
  // (after=DURATION); 0 = once protected.
  uint32_t drop_after_s = 0;
};

// How many copies of the data below a directory, where, and the protection
// reached afterwards.
struct Objective {
  uint32_t replicas = 0;
  Placement placement = Placement::kLocal;
  std::vector<NodeId> nodes;  // allowed nodes; empty = any
  uint64_t chunk_size = 0;    // for new files; 0 = the cluster default
  Protection protect;
  // Directories: keep-newest=N, the N most recently modified entries keep
  // their local copies (with keep-local=drop|pressure); 0 = none.
  uint32_t keep_newest = 0;
};

// The deadline of a protection goal set without within=.
inline constexpr uint32_t kDefaultProtectWithinS = 600;

// Applies settings to `base`: replicas=1..16, placement=local|spread,
// nodes=ID,ID (empty: any), chunk-size=SIZE, protect=replicas:N|ec:K+M|
// object|none, within=DURATION, keep-local=keep|drop|pressure, after=DURATION,
// keep-newest=N (0 removes it), and the word
// `sync` (no background protection: protect=none). kInvalidArgument names
// the bad setting. Whether meta serves a protection kind is meta's answer.
Result<Objective> ParseObjective(const std::vector<std::string>& settings, Objective base);
// "replicas=2 placement=local nodes=1,2 chunk-size=1 MiB protect=replicas:3
// within=5m" (the parts set).
std::string DescribeObjective(const Objective& objective);
// "replicas:3", "ec:4+2", "object", "none".
std::string DescribeProtection(const Protection& protect);

// One volume of a data node, as its last heartbeat reported it.
struct VolumeStatus {
  VolumeId volume;
  std::string uuid;  // written in the volume directory at first start
  std::string path;
  uint64_t total_bytes = 0;  // of the file system holding the volume
  uint64_t free_bytes = 0;
  uint64_t chunks = 0;  // chunk files on it
  // What its chunk files take there (allocated bytes), as the node last
  // counted (every 30 s or more); unset before its first count.
  std::optional<uint64_t> stored_bytes{};
};

// A data node as meta knows it.
struct NodeStatus {
  NodeId node;
  std::string address;   // host:port of its data service
  std::string hostname;
  std::string state;     // up, suspect, down, draining
  uint64_t last_heartbeat_ms_ago = 0;
  std::vector<VolumeStatus> volumes;
  uint64_t replicas = 0;  // chunk replicas meta places on it
  std::string host_id;    // boot id + network namespace: equal on one host (LocalHostId)
  // Its traffic counters, from its last heartbeat (0 before the first; they
  // restart from 0 with the node).
  uint64_t tcp_read_bytes = 0;   // chunk bytes served over TCP
  uint64_t tcp_write_bytes = 0;  // chunk bytes received over TCP
  uint64_t local_opens = 0;      // chunk files handed to same-host clients
  std::string metrics_address;   // host:port of its /metrics; "" when disabled
  // Down for longer than repair-grace: its replicas and erasure-coded cells
  // count as gone and are made again elsewhere (a down node that is not
  // lost yet still counts as holding them).
  bool lost = false;
};

// The cluster as meta reports it (`t0fs status`). Repair counters are since
// meta started.
struct ClusterStatus {
  std::string cluster_id;
  std::vector<NodeStatus> nodes;
  uint64_t files = 0;
  uint64_t directories = 0;
  uint64_t chunks = 0;
  uint64_t logical_bytes = 0;  // the sum of file sizes
  uint64_t sessions = 0;       // client sessions
  uint64_t open_handles = 0;
  uint64_t garbage_chunks = 0;    // chunk replicas awaiting removal
  uint64_t under_replicated = 0;  // chunks with fewer healthy replicas than their objective
  uint64_t over_replicated = 0;
  uint64_t stale_replicas = 0;
  uint64_t unavailable = 0;  // chunks with no readable replica at all
  // Files below their protection goal (protect=), as of the last repair pass.
  uint64_t protect_waiting_files = 0;
  uint64_t protect_waiting_bytes = 0;
  uint64_t protect_oldest_age_s = 0;
  uint64_t protect_overdue_files = 0;  // waiting longer than their within=
  // Chunks whose local copies were offloaded (keep-local=drop|pressure):
  // in the object tier or their cells only.
  uint64_t offloaded_chunks = 0;
  uint64_t offloaded_bytes = 0;
  uint64_t copies_running = 0;
  uint64_t copies_done = 0;
  uint64_t copies_failed = 0;
  uint64_t copied_bytes = 0;
  double copy_rate_bps = 0;     // over the last minute
  std::string metrics_address;  // host:port of meta's /metrics; "" when disabled
};

// Meta's check of its own namespace and layouts (MetaStore::Check).
struct NamespaceCheck {
  uint64_t inodes = 0;
  uint64_t chunks = 0;
  std::vector<std::string> problems;         // inconsistencies
  std::vector<std::string> below_objective;  // chunks with fewer healthy replicas than wanted
};

// A chunk replica meta knows: in a file's layout, or queued for removal
// from its node (`garbage`: replaced by repair, or of deleted data).
struct ChunkRef {
  ChunkId chunk;
  NodeId node;
  VolumeId volume;
  uint64_t version = 0;  // committed version; 0 = never written
  InodeId ino;
  uint64_t index = 0;  // chunk index in the file
  bool garbage = false;
  // 0: a replica; i + 1: the chunk's erasure-coded cell i (protect=ec),
  // stored on the node as a chunk of its own (docs/formats/ec.md).
  uint32_t cell = 0;
};

// A chunk file a data node holds.
struct StoredChunk {
  ChunkId chunk;
  VolumeId volume;
  uint64_t length = 0;
  uint64_t version = 0;
};

// What `t0fs fsck` found (AdminClient::Fsck). Clean when there are no
// problems and no chunk below its objective; warnings (a node that could not
// be checked) and notes (expected states, such as replicas awaiting removal)
// do not make it unclean. Lines of one kind beyond kMaxFsckLines are
// summarized in one.
struct FsckReport {
  std::vector<std::string> problems;
  std::vector<std::string> below_objective;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  uint64_t inodes = 0;
  uint64_t meta_chunks = 0;  // replicas in layouts
  uint64_t chunk_files = 0;  // chunk files found on the nodes checked
  uint64_t nodes_checked = 0;
  uint64_t nodes_unchecked = 0;  // not up, or did not answer their listing (warnings say which)
  // The chunk files in no layout (each also a problem line), by node.
  std::map<NodeId, std::vector<StoredChunk>> orphans;
  bool clean() const { return problems.empty() && below_objective.empty(); }
};
constexpr size_t kMaxFsckLines = 20;

// The host id of this host (NodeStatus::host_id of a node here).
std::string LocalHostId();

class AdminClient {
 public:
  struct Options {
    std::string meta;    // host:port
    std::string secret;  // the cluster secret
    Duration timeout{std::chrono::seconds(120)};  // per call (fsck-sized answers take long)
  };
  // Checks the address; the first call connects.
  static Result<std::unique_ptr<AdminClient>> Open(const Options& options);
  virtual ~AdminClient() = default;

  // The inode of an absolute path inside the file system ("/ckpt/run1").
  virtual Result<InodeId> Resolve(std::string_view path) = 0;
  virtual Result<Attr> GetAttr(InodeId ino) = 0;
  // Every chunk of a file (ReplicaInfo::local unset: see NodeStatus::host_id).
  virtual Result<std::vector<ChunkInfo>> Chunks(InodeId ino) = 0;

  virtual Result<Objective> GetObjective(InodeId ino) = 0;
  // Sets the objective of `ino` (and, `recursive`, of everything below a
  // directory); returns what was recorded and how many inodes changed.
  struct ObjectiveSet {
    Objective objective;
    uint64_t changed = 0;
  };
  virtual Result<ObjectiveSet> SetObjective(InodeId ino, const Objective& objective, bool recursive) = 0;

  // The cluster's status; Nodes() is its node list.
  virtual Result<ClusterStatus> GetStatus() = 0;
  Result<std::vector<NodeStatus>> Nodes();
  // Drain: the node takes no new data and its chunks move to other nodes;
  // Undrain: it takes data again.
  virtual Status Drain(NodeId node) = 0;
  virtual Status Undrain(NodeId node) = 0;

  // ---- fsck (admin_fsck.cc)
  // Meta checks its namespace and layouts.
  virtual Result<NamespaceCheck> CheckNamespace() = 0;
  // Every chunk replica meta knows, in layouts or queued for removal.
  virtual Result<std::vector<ChunkRef>> ChunkRefs() = 0;
  // The chunk files on one volume of the data node at `address`.
  virtual Result<std::vector<StoredChunk>> StoredChunks(const std::string& address,
                                                        VolumeId volume) = 0;
  // Has meta queue orphans of `node` (FsckReport::orphans) for removal by
  // the node (meta/store/meta_store.h QueueOrphans says which it takes);
  // how many were queued.
  virtual Result<uint64_t> QueueOrphans(NodeId node, const std::vector<StoredChunk>& files) = 0;
  // The whole check: meta's, then the chunk files of every node that is up
  // or draining compared with meta's replicas (orphans, missing and stale
  // files), and chunks whose healthy replicas are enough only by counting
  // those on down nodes. Nodes are listed before meta, so that a chunk
  // created meanwhile is not taken for an orphan. An error is returned only
  // when meta cannot be asked; a node that cannot be listed is a warning.
  Result<FsckReport> Fsck();
};

}  // namespace t0fs::client
