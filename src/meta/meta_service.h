// MetaService: `t0fs meta`, the metadata service ("the Anvil").
//
// Serves the namespace, layouts, sessions and cluster membership over RPC on
// top of a MetaStore. It never carries file data. Besides the handlers it
// runs one housekeeping thread: expiring client sessions whose lease ran out
// (which releases their open handles and frees unlinked files).
//
// Thread safety: handlers run concurrently on the server threads; the store
// serialises writes; liveness_ has its own mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/lock_file.h"
#include "meta/meta_config.h"
#include "meta/store/meta_store.h"
#include "rpc/server.h"

namespace t0fs::meta {

class MetaService {
 public:
  // Opens (or creates) the SQLite store at config.db and starts serving.
  static Result<std::unique_ptr<MetaService>> Start(const MetaConfig& config);
  // Serves an existing store (tests, other store implementations).
  static Result<std::unique_ptr<MetaService>> StartWithStore(const MetaConfig& config,
                                                             std::unique_ptr<MetaStore> store,
                                                             std::string secret);
  ~MetaService();
  void Stop();

  rpc::Endpoint endpoint() const { return server_->bound(0); }
  MetaStore& store() { return *store_; }

 private:
  using HandlerList = std::vector<std::pair<rpc::Method, rpc::Handler>>;
  MetaService(MetaConfig config, std::unique_ptr<MetaStore> store);

  // Handler families, one file each under handlers/.
  void AddSessionHandlers(HandlerList& h);
  void AddNamespaceHandlers(HandlerList& h);
  void AddFileHandlers(HandlerList& h);
  void AddClusterHandlers(HandlerList& h);

  void Housekeeping();
  void MarkSeen(NodeId node);
  // Up = a heartbeat within node_timeout.
  bool IsUp(NodeId node) const;

  MetaConfig config_;
  std::optional<LockFile> db_lock_;  // held while serving a database file
  std::unique_ptr<MetaStore> store_;
  std::unique_ptr<rpc::Server> server_;

  mutable std::mutex liveness_mu_;  // guards last_seen_
  std::unordered_map<NodeId, std::chrono::steady_clock::time_point> last_seen_;

  std::mutex stop_mu_;  // guards stopping_
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread housekeeping_;
};

}  // namespace t0fs::meta
