// Cluster membership, health and reporting: node registration, heartbeats
// (which also hand out garbage-chunk removals), status, fsck, chunk lists.
#include <fmt/format.h>

#include <set>

#include "common/logging.h"
#include "meta/meta_service.h"
#include "rpc/convert.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

using rpc::Call;
using rpc::Method;
using rpc::FromWire;
using rpc::Handle;
using rpc::ToWire;

namespace {

constexpr size_t kGarbagePerHeartbeat = 512;

// The volumes a node reports, as records of `node`.
std::vector<VolumeRecord> VolumesOf(const google::protobuf::RepeatedPtrField<pb::VolumeInfo>& in, NodeId node) {
  std::vector<VolumeRecord> out;
  for (const pb::VolumeInfo& v : in) {
    out.push_back(FromWire<VolumeRecord>(v));
    out.back().node = node;
  }
  return out;
}

}  // namespace

void MetaService::AddClusterHandlers(HandlerList& h) {
  h.push_back(Handle<Method::kRegisterNode>(
      [this](const pb::RegisterNodeReq& req, pb::RegisterNodeRsp& rsp, Call& call) -> Status {
        if (req.address().empty()) return Status(StatusCode::kInvalidArgument, "a node must give its address");
        NodeRecord node;
        node.node = NodeId(req.node());
        node.host_id = req.host_id();
        node.hostname = req.hostname();
        node.address = req.address();
        node.local_socket = req.local_socket();
        node.volumes = VolumesOf(req.volumes(), node.node);
        ASSIGN_OR_RETURN(NodeRecord stored, store_->RegisterNode(node));
        ForgetCachedNodes();
        // A (re)starting node may have lost or missed data: reconcile it.
        // It is not up yet: until it holds this answer (the capability key)
        // it refuses every chunk request, so it counts as seen from its
        // first heartbeat, which it sends right after.
        planner_->RequestCheck(stored.node);
        LOG_INFO("node {} registered from {} ({} at {}, {} volume(s))", stored.node, call.peer,
                 stored.hostname, stored.address, stored.volumes.size());
        rsp.set_node(stored.node.value());
        rsp.set_cluster_id(store_->cluster_id());
        rsp.set_heartbeat_ms(static_cast<uint64_t>(config_.heartbeat.value.count()));
        rsp.set_capability_key(cap_key_);
        if (object_tier_) *rsp.mutable_object_tier() = object_tier_->NodeConfig();
        for (const VolumeRecord& v : stored.volumes) ToWire(v, rsp.add_volumes());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kHeartbeat>(
      [this](const pb::HeartbeatReq& req, pb::HeartbeatRsp& rsp, Call&) -> Status {
        NodeId node(req.node());
        Status st = store_->UpdateVolumes(node, VolumesOf(req.volumes(), node), WallNow());
        if (st.code() == StatusCode::kNotFound) {
          return Status(StatusCode::kMetaNoNode, fmt::format("node {} is not registered", node));
        }
        RETURN_IF_ERROR(st);
        NodeSeen(node);
        if (req.awaiting_check()) planner_->RequestCheck(node);  // the first one was lost
        planner_->OnHeartbeat(node, req);
        node_reports_.Update(node, req);
        for (pb::NodeCommand& cmd : planner_->TakeCommands(node)) *rsp.add_commands() = std::move(cmd);
        if (req.done_commands_size() > 0) {
          std::vector<uint64_t> done(req.done_commands().begin(), req.done_commands().end());
          RETURN_IF_ERROR(store_->AckGarbage(done));
        }
        ASSIGN_OR_RETURN(auto garbage, store_->TakeGarbage(node, kGarbagePerHeartbeat));
        for (const GarbageChunk& g : garbage) {
          auto* cmd = rsp.add_commands();
          cmd->set_id(g.id);
          cmd->set_kind(pb::COMMAND_REMOVE);
          cmd->set_chunk(g.chunk.value());
          cmd->set_volume(g.volume.value());
        }
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kClusterStatus>(
      [this](const pb::Empty&, pb::ClusterStatusRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(auto nodes, ListNodes());
        ASSIGN_OR_RETURN(StoreCounts counts, store_->Counts());
        RepairStats repair = planner_->Stats();
        Timespec now = WallNow();
        rsp.set_cluster_id(store_->cluster_id());
        for (const NodeRecord& node : nodes) {
          auto* out = rsp.add_nodes();
          out->set_node(node.node.value());
          out->set_address(node.address);
          out->set_hostname(node.hostname);
          Health h = health_.Of(node.node);
          out->set_state(node.admin_state == NodeAdminState::kDraining && h != Health::kDown ? "draining"
                                                                                           : NodeHealth::Name(h));
          out->set_lost(health_.Lost(node.node, config_.repair_grace.value));
          auto replicas = repair.replicas_per_node.find(node.node);
          out->set_replicas(replicas == repair.replicas_per_node.end() ? 0 : replicas->second);
          out->set_host_id(node.host_id);
          int64_t ago = (now.sec - node.last_heartbeat.sec) * 1000 +
                        (static_cast<int64_t>(now.nsec) - node.last_heartbeat.nsec) / 1000000;
          out->set_last_heartbeat_ms_ago(ago > 0 ? static_cast<uint64_t>(ago) : 0);
          for (const VolumeRecord& v : node.volumes) ToWire(v, out->add_volumes());
          node_reports_.Fill(node.node, out);
        }
        rsp.set_metrics_address(metrics_address());
        rsp.set_unavailable(repair.unavailable);
        rsp.set_protect_waiting_files(repair.protect.waiting_files);
        rsp.set_protect_waiting_bytes(repair.protect.waiting_bytes);
        rsp.set_protect_oldest_age_s(repair.protect.oldest_age_s);
        rsp.set_protect_overdue_files(repair.protect.overdue_files);
        rsp.set_offloaded_chunks(repair.offloaded_chunks);
        rsp.set_offloaded_bytes(repair.offloaded_bytes);
        rsp.set_files(counts.files);
        rsp.set_directories(counts.directories);
        rsp.set_chunks(counts.chunks);
        rsp.set_logical_bytes(counts.logical_bytes);
        rsp.set_sessions(counts.sessions);
        rsp.set_open_handles(counts.open_handles);
        rsp.set_garbage_chunks(counts.garbage_chunks);
        rsp.set_under_replicated(repair.under_replicated);
        rsp.set_over_replicated(repair.over_replicated);
        rsp.set_stale_replicas(repair.stale_replicas);
        rsp.set_copies_running(repair.copies_running);
        rsp.set_copies_done(repair.copies_done);
        rsp.set_copies_failed(repair.copies_failed);
        rsp.set_copied_bytes(repair.copied_bytes);
        rsp.set_copy_rate_bps(repair.copy_rate_bps);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kFsck>([this](const pb::Empty&, pb::FsckRsp& rsp, Call&) -> Status {
    // Replicas on down nodes are not readable: a file held only there
    // (e.g. lost before it was protected) is named.
    std::set<NodeId> down;
    ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, store_->ListNodes());
    for (const NodeRecord& n : nodes) {
      if (health_.Of(n.node) == Health::kDown) down.insert(n.node);
    }
    ASSIGN_OR_RETURN(auto problems, store_->Check(down));
    for (auto& p : problems) {
      if (p.starts_with(MetaStore::kBelowObjective)) {
        rsp.add_below_objective(p.substr(MetaStore::kBelowObjective.size()));
      } else {
        rsp.add_problems(std::move(p));
      }
    }
    ASSIGN_OR_RETURN(StoreCounts counts, store_->Counts());
    rsp.set_inodes(counts.files + counts.directories);
    rsp.set_chunks(counts.chunks);
    return Status::Ok();
  }));

  h.push_back(Handle<Method::kChunkList>(
      [this](const pb::ChunkListReq& req, pb::ChunkListRsp& rsp, Call&) -> Status {
        size_t max = req.max() == 0 || req.max() > 10000 ? 10000 : req.max();
        bool eof = false;
        ASSIGN_OR_RETURN(auto chunks, store_->ListChunks(ChunkId(req.after()), max, &eof));
        for (const ChunkRecord& c : chunks) {
          auto* out = rsp.add_chunks();
          out->set_chunk(c.chunk.value());
          out->set_node(c.replica.node.value());
          out->set_volume(c.replica.volume.value());
          out->set_version(c.replica.version);
          out->set_ino(c.ino.value());
          out->set_index(c.index);
          out->set_garbage(c.garbage);
          out->set_cell(c.cell);
        }
        rsp.set_eof(eof);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kQueueOrphans>(
      [this](const pb::QueueOrphansReq& req, pb::QueueOrphansRsp& rsp, Call& call) -> Status {
        std::vector<OrphanFile> files;
        files.reserve(req.files_size());
        for (const pb::OrphanFile& f : req.files()) {
          files.push_back(OrphanFile{ChunkId(f.chunk()), VolumeId(f.volume()), f.version()});
        }
        ASSIGN_OR_RETURN(size_t queued, store_->QueueOrphans(NodeId(req.node()), files));
        // (A node's own sweep offers all its files: quiet when none is an orphan.)
        if (queued > 0 || call.peer_role != "node") {
          LOG_INFO("{} of {} orphan chunk file(s) on node {} queued for removal by {}", queued,
                   files.size(), req.node(), call.peer);
        }
        rsp.set_queued(queued);
        return Status::Ok();
      }));
}

}  // namespace t0fs::meta
