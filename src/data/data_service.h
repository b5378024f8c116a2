// DataService: `t0fs data`, the data service of one node.
//
// Owns the volumes and the chunk store, serves chunk I/O over TCP and fd
// passing on a unix socket (every request checked against a meta-signed
// capability), and keeps itself registered with meta: it registers at start
// (retrying while meta is unreachable), then heartbeats volume statistics
// and executes the commands meta returns: removing chunk files no layout
// references, copying chunks from peers (repair), reporting its inventory.
// A scrubber verifies every chunk in the background.
//
// Thread safety: Start/Stop from one thread; everything else is internal.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/ids.h"
#include "data/capability_gate.h"
#include "data/chunk_store.h"
#include "data/copier.h"
#include "data/data_config.h"
#include "data/data_metrics.h"
#include "data/scrubber.h"
#include "data/volume.h"
#include "metrics/metrics_server.h"
#include "metrics/registry.h"
#include "rpc/channel.h"
#include "rpc/proto/meta.pb.h"
#include "rpc/server.h"

namespace t0fs::data {

class DataService {
 public:
  // Opens the volumes and starts serving; registration with meta proceeds
  // in the background (see registered()).
  static Result<std::unique_ptr<DataService>> Start(const DataConfig& config);
  ~DataService();
  void Stop();

  bool registered() const { return registered_.load(); }
  // The chunk files this node serves (tests look at its counters).
  const ChunkStore& store() const { return store_; }
  NodeId node() const;
  rpc::Endpoint tcp_endpoint() const { return server_->bound(0); }
  const std::string& local_socket() const { return local_socket_; }
  // host:port of /metrics; empty when disabled. Fixed at start: read by
  // heartbeats and RPC handlers while Stop() stops the metrics server.
  const std::string& metrics_address() const { return metrics_address_; }

 private:
  explicit DataService(DataConfig config);
  void HeartbeatLoop();
  // Counts what the chunk files take on each volume (CountStoredBytes) at
  // start, then again after a pause of kUsagePause or 50 times the last
  // count's duration, whichever is longer (a walk of every file).
  void UsageLoop();
  static constexpr std::chrono::seconds kUsagePause{30};
  // Offers meta the chunk files of each volume (orphan_sweep.h) every
  // config_.orphan_sweep; the first time soon after the start.
  void SweepLoop();
  static constexpr std::chrono::minutes kFirstSweepAfter{2};
  static constexpr size_t kSweepPage = 1000;
  Status Register();
  Status Heartbeat();
  // Checks replicas meta expects here (command kind 3): missing or older
  // files are reported as problems.
  void CheckReplicas(const pb::NodeCommand& cmd);

  DataConfig config_;
  std::unique_ptr<metrics::Registry> registry_ = std::make_unique<metrics::Registry>();
  ChunkTraffic traffic_;  // children of registry_'s families
  RemovalCounters removals_;
  std::string secret_;
  std::string local_socket_;
  std::string advertise_;
  std::vector<Volume> volumes_;
  ChunkStore store_;
  CapabilityGate gate_;
  std::unique_ptr<Scrubber> scrubber_;
  std::unique_ptr<Copier> copier_;
  std::unique_ptr<rpc::Server> server_;
  std::unique_ptr<rpc::Channel> meta_;
  std::unique_ptr<metrics::MetricsServer> metrics_server_;  // stopped first: its callbacks read the members
  std::string metrics_address_;

  mutable std::mutex mu_;  // guards node_, done_, stopping_, stored_
  std::condition_variable cv_;
  NodeId node_;
  std::vector<uint64_t> done_;  // executed command ids, acknowledged with the next heartbeat
  std::vector<pb::CopyResult> requeue_copies_;  // copy results a failed heartbeat did not deliver
  bool stopping_ = false;
  std::atomic<bool> registered_{false};
  bool awaiting_check_ = false;                    // (heartbeat thread) HeartbeatReq.awaiting_check
  std::unordered_map<VolumeId, uint64_t> stored_;  // the last UsageLoop count per volume
  std::thread heartbeat_;
  std::thread usage_;
  std::thread sweep_;
};

}  // namespace t0fs::data
