// Objectives (replicas, placement, chunk size of a tree), replica problems
// reported by clients, and node administration (drain).
#include <fmt/format.h>

#include "common/logging.h"
#include "meta/meta_service.h"
#include "meta/policy.h"
#include "rpc/convert.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

using rpc::Call;
using rpc::Method;
using rpc::FromWire;
using rpc::Handle;
using rpc::ToWire;

namespace {

// Recall on read: whether the file of `chunk` keeps a copy staged back for
// a reader a while — keep-local=pressure (its least recently used files go
// first), or drop with after= (the read open moved its atime). drop without
// after= would offload it again at the first pass after the reader closes.
Result<bool> RecallsOnRead(MetaStore& store, ChunkId chunk) {
  if (!chunk.valid()) return false;
  bool eof = false;
  ASSIGN_OR_RETURN(std::vector<ChunkReplicas> found,
                   store.ScanReplicas(ChunkId(chunk.value() - 1), 1, &eof));
  if (found.empty() || found.front().chunk != chunk) return false;
  const Protection& p = found.front().objective.protect;
  return p.keep_local == KeepLocal::kPressure ||
         (p.keep_local == KeepLocal::kDrop && p.drop_after_s > 0);
}

}  // namespace

void MetaService::AddObjectiveHandlers(HandlerList& h) {
  h.push_back(Handle<Method::kObjective>(
      [this](const pb::ObjectiveReq& req, pb::ObjectiveRsp& rsp, Call& call) -> Status {
        InodeId ino(req.ino());
        if (req.set()) {
          const pb::Objective& in = req.objective();
          if (in.placement() != pb::PLACEMENT_LOCAL && in.placement() != pb::PLACEMENT_SPREAD) {
            return Status(StatusCode::kInvalidArgument, "placement must be local or spread");
          }
          Objective obj = FromWire<Objective>(in);
          RETURN_IF_ERROR(ValidateObjective(obj));
          if (obj.protect.kind == ProtectKind::kObject && !object_tier_) {
            return Status(StatusCode::kNotSupported,
                          "protect=object needs an object tier: start meta with "
                          "--object-endpoint, --object-bucket and --object-credentials");
          }
          ASSIGN_OR_RETURN(auto nodes, store_->ListNodes());
          for (NodeId n : obj.nodes) {
            bool known = std::any_of(nodes.begin(), nodes.end(), [&](const NodeRecord& r) { return r.node == n; });
            if (!known) return Status(StatusCode::kMetaNoNode, fmt::format("node {} is not registered", n));
          }
          ASSIGN_OR_RETURN(uint64_t changed, store_->SetObjective(ino, obj, req.recursive()));
          rsp.set_changed(changed);
          LOG_INFO(
              "objective of inode {} set to replicas={} placement={} protect kind {} copies {} "
              "within {}s by {} "
              "({} inodes)",
              ino, obj.replicas, obj.placement == Placement::kLocal ? "local" : "spread",
              static_cast<uint32_t>(obj.protect.kind), obj.protect.copies, obj.protect.within_s,
              call.peer, changed);
        }
        ASSIGN_OR_RETURN(Objective current, store_->GetObjective(ino));
        ToWire(current, rsp.mutable_objective());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kReportReplica>(
      [this](const pb::ReportReplicaReq& req, pb::Empty&, Call& call) -> Status {
        ChunkId chunk(req.chunk());
        NodeId node(req.node());
        if (req.reason() == pb::REPORT_RECALL && req.reader()) {
          ASSIGN_OR_RETURN(bool recalls, RecallsOnRead(*store_, chunk));
          if (recalls && planner_->MarkUrgent(chunk, RepairPlanner::kRecallFor)) {
            LOG_INFO("{} reads chunk {}, which is offloaded: staging it back", call.peer, chunk);
          }
          return Status::Ok();
        }
        if (req.reason() == pb::REPORT_RECALL) {
          // A writer waits for an offloaded chunk (keep-local=drop|pressure):
          // the next pass stages it back (the mark only lets it; the pass
          // checks the chunk is offloaded).
          if (planner_->MarkUrgent(chunk, RepairPlanner::kRecallFor)) {
            LOG_INFO("{} waits to write chunk {}, which is offloaded: staging it back", call.peer,
                     chunk);
            WantPass();
          }
          return Status::Ok();
        }
        if (req.reason() == pb::REPORT_UNREACHABLE) {
          // Unreachable: health follows from heartbeats. A writer waiting
          // for the chunk has it recalled now — once heartbeats say the node
          // is gone too, never on the client's word alone.
          const Health health = health_.Of(node);
          if (req.writer_waits() && object_tier_ && health != Health::kUp &&
              planner_->MarkUrgent(chunk)) {
            LOG_INFO(
                "{} waits to write chunk {}, whose node {} is {}: recalling it from the object "
                "tier now if "
                "no up node holds it",
                call.peer, chunk, node, NodeHealth::Name(health));
            WantPass();
          } else {
            LOG_DEBUG("{} could not reach node {} ({}) for chunk {}{}", call.peer, node,
                      NodeHealth::Name(health), chunk,
                      req.writer_waits() ? " (a writer waits)" : "");
          }
          return Status::Ok();
        }
        if (req.reason() == pb::REPORT_STALE) {
          Status marked = store_->ReportReplicaStale(chunk, node, req.seen_version());
          if (marked.code() == StatusCode::kStale || marked.code() == StatusCode::kNotFound) {
            // A layout older or newer than meta's (the chunk was truncated,
            // replaced or written by another client since): nothing to repair.
            LOG_DEBUG("{} reports the replica of chunk {} on node {} stale ({}); not so here: {}",
                      call.peer, chunk, node, req.detail(), marked.message());
            return Status::Ok();
          }
          RETURN_IF_ERROR(marked);
          LOG_WARN("{} reports the replica of chunk {} on node {} stale ({}); it will be repaired",
                   call.peer, chunk, node, req.detail());
          return Status::Ok();
        }
        LOG_WARN("{} reports the replica of chunk {} on node {} bad ({}); it will be repaired", call.peer, chunk,
                 node, req.detail());
        return store_->SetReplicaState(chunk, node, ReplicaState::kStale);
      }));

  h.push_back(Handle<Method::kNodeAdmin>(
      [this](const pb::NodeAdminReq& req, pb::Empty&, Call& call) -> Status {
        if (req.admin_state() != pb::NODE_ACTIVE && req.admin_state() != pb::NODE_DRAINING) {
          return Status(StatusCode::kInvalidArgument, "admin state must be active or draining");
        }
        auto state = static_cast<NodeAdminState>(req.admin_state());
        RETURN_IF_ERROR(store_->SetNodeAdminState(NodeId(req.node()), state));
        ForgetCachedNodes();
        LOG_INFO("node {} set {} by {}", req.node(), state == NodeAdminState::kDraining ? "draining" : "active",
                 call.peer);
        return Status::Ok();
      }));
}

}  // namespace t0fs::meta
