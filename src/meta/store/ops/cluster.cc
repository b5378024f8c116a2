// Cluster records: data nodes and their volumes, and the garbage queue the
// nodes drain.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ec/cells.h"
#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

NodeRecord RecordOf(const NodeRow& row) {
  NodeRecord n;
  n.node = row.node;
  n.admin_state = row.admin_state;
  n.host_id = row.host_id;
  n.hostname = row.hostname;
  n.address = row.address;
  n.local_socket = row.local_socket;
  n.last_heartbeat = row.last_heartbeat;
  return n;
}

// The volumes of every node, by node (each by id).
Result<std::map<NodeId, std::vector<VolumeRecord>>> VolumesByNode(ReadTxn& txn) {
  ASSIGN_OR_RETURN(std::vector<VolumeRecord> volumes, txn.ListVolumes());
  std::map<NodeId, std::vector<VolumeRecord>> by_node;
  for (VolumeRecord& v : volumes) by_node[v.node].push_back(std::move(v));
  return by_node;
}

// The registered volume with `uuid`, if any.
Result<std::optional<VolumeRecord>> VolumeByUuid(ReadTxn& txn, std::string_view uuid) {
  ASSIGN_OR_RETURN(std::vector<VolumeRecord> volumes, txn.ListVolumes());
  for (VolumeRecord& v : volumes) {
    if (v.uuid == uuid) return std::optional<VolumeRecord>(std::move(v));
  }
  return std::optional<VolumeRecord>();
}

}  // namespace

Result<NodeRecord> PosixStore::RegisterNode(const NodeRecord& node) {
  NodeRecord stored;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    NodeId id = node.node;
    NodeRow row;
    if (id.valid()) {
      // An explicit id is kept; the counter then never hands it out.
      RETURN_IF_ERROR(txn.ReserveId(Counter::kNode, id.value()));
      ASSIGN_OR_RETURN(std::optional<NodeRow> existing, txn.GetNode(id));
      if (existing) row = std::move(*existing);
    } else {
      ASSIGN_OR_RETURN(uint64_t next, txn.NextId(Counter::kNode));
      id = NodeId(next);
    }
    row.node = id;
    row.host_id = node.host_id;
    row.hostname = node.hostname;
    row.address = node.address;
    row.local_socket = node.local_socket;
    RETURN_IF_ERROR(txn.PutNode(row));
    for (const VolumeRecord& v : node.volumes) {
      if (v.uuid.empty()) return Status(StatusCode::kInvalidArgument, "volume without uuid");
      ASSIGN_OR_RETURN(std::optional<VolumeRecord> owned, VolumeByUuid(txn, v.uuid));
      if (owned && owned->node != id) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("volume {} ({}) belongs to node {}, not node {}", v.uuid, v.path,
                                  owned->node, id));
      }
      VolumeRecord put = v;
      put.node = id;
      if (owned) {
        put.volume = owned->volume;
      } else {
        ASSIGN_OR_RETURN(uint64_t vid, txn.NextId(Counter::kVolume));
        put.volume = VolumeId(vid);
      }
      RETURN_IF_ERROR(txn.PutVolume(put));
    }
    stored = RecordOf(row);
    ASSIGN_OR_RETURN(auto volumes, VolumesByNode(txn));
    stored.volumes = std::move(volumes[id]);
    return Status::Ok();
  }));
  return stored;
}

Status PosixStore::UpdateVolumes(NodeId node, const std::vector<VolumeRecord>& volumes,
                                 Timespec now) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<NodeRow> row, txn.GetNode(node));
    if (!row) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", node));
    row->last_heartbeat = now;
    RETURN_IF_ERROR(txn.PutNode(*row));
    for (const VolumeRecord& v : volumes) {
      // Matched by id when the node knows it, else by uuid.
      std::optional<VolumeRecord> known;
      if (v.volume.valid()) {
        ASSIGN_OR_RETURN(known, txn.GetVolume(v.volume));
      } else {
        ASSIGN_OR_RETURN(known, VolumeByUuid(txn, v.uuid));
      }
      if (!known || known->node != node) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("volume {} ({}) is not a registered volume of node {}", v.volume,
                                  v.uuid, node));
      }
      known->total_bytes = v.total_bytes;
      known->free_bytes = v.free_bytes;
      known->chunks = v.chunks;
      RETURN_IF_ERROR(txn.PutVolume(*known));
    }
    return Status::Ok();
  });
}

Result<std::vector<NodeRecord>> PosixStore::ListNodes() {
  std::vector<NodeRecord> nodes;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    nodes.clear();
    ASSIGN_OR_RETURN(std::vector<NodeRow> rows, txn.ListNodes());
    ASSIGN_OR_RETURN(auto volumes, VolumesByNode(txn));
    for (const NodeRow& row : rows) {
      nodes.push_back(RecordOf(row));
      nodes.back().volumes = std::move(volumes[row.node]);
    }
    return Status::Ok();
  }));
  return nodes;
}

Result<std::vector<GarbageChunk>> PosixStore::TakeGarbage(NodeId node, size_t max) {
  std::vector<GarbageChunk> out;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    out.clear();
    ASSIGN_OR_RETURN(std::vector<GarbageRow> rows, txn.ListGarbageOfNode(node, max));
    for (const GarbageRow& g : rows)
      out.push_back(GarbageChunk{g.id, g.chunk, g.node, g.volume, g.version});
    return Status::Ok();
  }));
  return out;
}

Status PosixStore::AckGarbage(const std::vector<uint64_t>& ids) {
  return Write([&](WriteTxn& txn) -> Status {
    for (uint64_t id : ids) RETURN_IF_ERROR(txn.DeleteGarbage(id));
    return Status::Ok();
  });
}

Result<size_t> PosixStore::QueueOrphans(NodeId node, const std::vector<OrphanFile>& files) {
  if (files.size() > kMaxOrphansPerCall) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("at most {} orphans per call", kMaxOrphansPerCall));
  }
  size_t queued = 0;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    queued = 0;  // a retried transaction starts over
    for (const OrphanFile& f : files) {
      ASSIGN_OR_RETURN(std::optional<VolumeRecord> volume, txn.GetVolume(f.volume));
      if (!volume || volume->node != node) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("volume {} is not a volume of node {}", f.volume, node));
      }
      const bool cell = ec::IsCellId(f.chunk);
      ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> live,
                       txn.GetChunk(cell ? ec::ChunkOfCell(f.chunk) : f.chunk));
      // A chunk that lives on: only a plain file on a node where no replica
      // row (an offloaded one has no file) places it. (Cells of a live
      // chunk are left: an encode writes them before their stripe is
      // recorded.)
      if (live && (cell || std::any_of(live->replicas.begin(), live->replicas.end(),
                                       [&](const ReplicaRow& r) {
                                         return r.node == node &&
                                                r.state != ReplicaState::kOffloaded;
                                       }))) {
        continue;
      }
      ASSIGN_OR_RETURN(std::vector<GarbageRow> pending, txn.ListGarbageOfChunk(f.chunk));
      if (std::any_of(pending.begin(), pending.end(),
                      [&](const GarbageRow& g) { return g.node == node; })) {
        continue;
      }
      ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
      RETURN_IF_ERROR(
          txn.PutGarbage(GarbageRow{id, f.chunk, InodeId(0), 0, node, f.volume, f.version}));
      ++queued;
    }
    return Status::Ok();
  }));
  return queued;
}

}  // namespace t0fs::meta
