// The meta service's metrics and the per-node traffic it relays to
// `t0fs status` (docs/operations.md has the table).
//
// Everything here is read at scrape time from where it already lives — the
// store (nodes, volumes, namespace counts), NodeHealth and the repair
// planner — so there is no second bookkeeping on the request path. Request
// counts and latencies per method come from the RPC server (rpc/server_metrics.h).
//
// Thread safety: NodeReports is safe for concurrent use.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/ids.h"
#include "meta/health.h"
#include "meta/repair.h"
#include "meta/store/meta_store.h"
#include "metrics/registry.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

// The traffic counters and metrics address each data node sent with its
// last heartbeat; kept in memory only (a meta restart starts empty and the
// next heartbeats refill it).
class NodeReports {
 public:
  void Update(NodeId node, const pb::HeartbeatReq& beat);
  // Copies what `node` last reported into `out` (nothing if it has not yet),
  // with what its volumes in out->volumes() store.
  void Fill(NodeId node, pb::NodeStatus* out) const;

 private:
  struct Report {
    uint64_t tcp_read_bytes = 0;
    uint64_t tcp_write_bytes = 0;
    uint64_t local_opens = 0;
    std::string metrics_address;
    std::unordered_map<uint64_t, uint64_t> stored_bytes;  // by volume id, as last counted
  };
  mutable std::mutex mu_;  // guards reports_
  std::unordered_map<NodeId, Report> reports_;
};

// Registers meta's callback families: node states and heartbeat ages,
// volumes as heartbeats report them, repair backlog and progress, namespace
// counts. The referenced objects must outlive the registry's server.
void AddMetaMetrics(metrics::Registry& registry, MetaStore& store, const NodeHealth& health,
                    RepairPlanner& planner);

}  // namespace t0fs::meta
