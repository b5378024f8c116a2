// MetaService: `t0fs meta`, the metadata service ("the Anvil").
//
// Serves the namespace, layouts (with chunk capabilities), sessions,
// objectives and cluster membership over RPC on top of a MetaStore. It never
// carries file data. Besides the handlers it runs one housekeeping thread:
// expiring client sessions whose lease ran out (which releases their open
// handles and frees unlinked files) and the repair planner's passes.
//
// Several meta servers may serve one shared store (PostgreSQL): any of them
// answers any client, since every changeable row lives in the store. Node
// health follows the heartbeats each server stores; the housekeeping runs on
// one server at a time, the holder of the store's "housekeeping" lease,
// taken over by another when its holder dies.
//
// Thread safety: handlers run concurrently on the server threads; the store
// serialises writes; NodeHealth and RepairPlanner lock internally.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/capability.h"
#include "common/lock_file.h"
#include "meta/change_feed.h"
#include "meta/health.h"
#include "meta/meta_config.h"
#include "meta/meta_metrics.h"
#include "meta/object_tier.h"
#include "meta/placement.h"
#include "meta/repair.h"
#include "meta/store/meta_store.h"
#include "metrics/metrics_server.h"
#include "metrics/registry.h"
#include "rpc/server.h"

namespace t0fs::pb {
class MakeNodeReq;
}  // namespace t0fs::pb

namespace t0fs::meta {

class MetaService {
 public:
  // Opens (or creates) the store at config.store (or config.db, the older
  // form; store_url.h) and starts serving.
  static Result<std::unique_ptr<MetaService>> Start(const MetaConfig& config);
  // Serves an existing store (tests, other store implementations).
  // `shared_store`: other meta servers may serve it too (housekeeping under
  // a lease).
  static Result<std::unique_ptr<MetaService>> StartWithStore(const MetaConfig& config,
                                                             std::unique_ptr<MetaStore> store,
                                                             std::string secret,
                                                             bool shared_store = false);
  ~MetaService();
  void Stop();

  rpc::Endpoint endpoint() const { return server_->bound(0); }
  MetaStore& store() { return *store_; }
  // host:port of /metrics; empty when disabled. Fixed at start: read by
  // heartbeats and RPC handlers while Stop() stops the metrics server.
  const std::string& metrics_address() const { return metrics_address_; }

 private:
  using HandlerList = std::vector<std::pair<rpc::Method, rpc::Handler>>;
  MetaService(MetaConfig config, std::unique_ptr<MetaStore> store);

  // Handler families, one file each under handlers/.
  void AddSessionHandlers(HandlerList& h);
  void AddNamespaceHandlers(HandlerList& h);
  void AddFileHandlers(HandlerList& h);
  void AddClusterHandlers(HandlerList& h);
  void AddObjectiveHandlers(HandlerList& h);

  void Housekeeping();
  // Writes the object tier's manifest (meta/object_manifest.h) every
  // object-manifest-interval while this server leads the housekeeping and
  // objects were uploaded or deleted since the last one (the first time
  // after it started leading: always).
  void WriteManifests();
  // Node health from the heartbeats stored by every meta server.
  void RefreshHealth();
  // The node rows, with their stored heartbeats taken into this server's
  // health on a shared store: a node that registered through another
  // server is usable here at once (placement, statfs, status read these).
  Result<std::vector<NodeRecord>> ListNodes();
  // True when this server should run the housekeeping now: always on a store
  // of its own, while it holds the lease on a shared one.
  bool LeadsHousekeeping();
  // A node's heartbeat or registration: health, and reconciliation when it
  // comes back after being down (or is new to this meta).
  void NodeSeen(NodeId node);
  // Usable for new data: up or suspect.
  bool IsUp(NodeId node) const { return health_.Of(node) != Health::kDown; }
  // `out` = the chunks of inode `ino` (chunk size `chunk_size`), each
  // signed with `rights`: capabilities scope what a client may touch to the
  // chunks meta showed it, for a limited time (permissions themselves are
  // checked at open, by the kernel for FUSE clients). A chunk whose object
  // tier copy is its committed version names nodes to read it through.
  void LayoutToWire(InodeId ino, uint64_t chunk_size, const std::vector<ChunkLayout>& chunks,
                    uint32_t rights, pb::Layout* out);
  // Up to kObjectReaders nodes that are up, starting at a place that
  // `chunk` picks (reads spread over the nodes).
  std::vector<NodeId> ObjectReaders(ChunkId chunk);
  static constexpr size_t kObjectReaders = 3;
  // Where a new chunk of a file with `attr`'s objective and chunk size goes:
  // placement over the usable nodes, the first replica on `writer` under
  // placement=local.
  Result<std::vector<ReplicaTarget>> PlaceChunk(const InodeAttr& attr, NodeId writer);
  // PlaceChunk's parts: the nodes as placement weighs them (health, load),
  // and the choice for `attr` among them (no store access: it runs inside
  // a create's transaction).
  std::vector<NodeChoice> ChoicesOf(const std::vector<NodeRecord>& nodes);
  // The chunk id a create names for its chunk 0 (MakeNodeReq.first_chunk_id)
  // if a meta server reserved it for a client (its capability proves it);
  // otherwise none.
  ChunkId ReservedChunk(const pb::MakeNodeReq& req) const;
  static Result<std::vector<ReplicaTarget>> PlaceOn(const std::vector<NodeChoice>& choices, const InodeAttr& attr,
                                                    NodeId writer, VolumeId writer_volume = {});
  // ListNodes, reused for kNodeCacheTime by the create's optional chunk-0
  // placement (one store transaction per create, not two); a registration
  // or an admin change through this server forgets it. Allocate always
  // lists afresh, so a create that missed a new node leaves chunk 0 to it.
  Result<std::shared_ptr<const std::vector<NodeRecord>>> CachedNodes();
  void ForgetCachedNodes();
  static constexpr std::chrono::seconds kNodeCacheTime{1};

  MetaConfig config_;
  std::unique_ptr<metrics::Registry> registry_ = std::make_unique<metrics::Registry>();
  std::optional<LockFile> db_lock_;  // held while serving a database file
  std::unique_ptr<MetaStore> store_;
  std::unique_ptr<rpc::Server> server_;
  std::string cap_key_;
  NodeHealth health_;
  std::unique_ptr<ObjectTier> object_tier_;  // null: the cluster has none
  std::unique_ptr<RepairPlanner> planner_;
  NodeReports node_reports_;  // traffic and metrics address from heartbeats
  std::mutex nodes_mu_;  // guards nodes_cache_, nodes_cached_at_
  std::shared_ptr<const std::vector<NodeRecord>> nodes_cache_;
  std::chrono::steady_clock::time_point nodes_cached_at_;
  // What clients changed through this server, for other clients' mounts.
  ChangeFeed changes_;
  static ChangeFeed::Change NameChange(InodeId parent, std::string name) { return {parent, std::move(name), {}}; }
  static ChangeFeed::Change InodeChange(InodeId ino) { return {{}, {}, ino}; }
  std::unique_ptr<metrics::MetricsServer> metrics_server_;  // stopped first: its callbacks read the members
  std::string metrics_address_;

  std::mutex stop_mu_;  // guards stopping_ and pass_wanted_
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  // A writer waits for a chunk to be staged back (MarkUrgent): the next
  // repair pass runs now, not after the rest of repair-interval (WantPass).
  bool pass_wanted_ = false;
  void WantPass();
  std::thread housekeeping_;
  std::thread manifests_;  // WriteManifests; only with an object tier
  bool shared_store_ = false;
  std::string server_id_;  // host@address: the lease holder name
  std::atomic<bool> leading_ = false;  // written by the housekeeping thread only
  std::string object_gc_error_;  // housekeeping thread only: the last one logged
  std::atomic<uint64_t> objects_deleted_ = 0;  // from the bucket by the housekeeping since start
  metrics::Counter* manifest_ok_ = nullptr;  // t0fs_meta_object_manifest_writes_total (with a tier)
  metrics::Counter* manifest_failed_ = nullptr;
  std::atomic<uint64_t> manifest_files_ = 0;   // in the last manifest written
  std::atomic<int64_t> manifest_written_ = 0;  // its wall time, seconds
};

}  // namespace t0fs::meta
