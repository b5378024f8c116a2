// Cluster records: data nodes and their volumes, and the garbage queue the
// nodes drain.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

Status LoadVolumes(sqlite::Db& db, NodeRecord& node) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT id, uuid, path, total_bytes, free_bytes, chunks "
                                    "FROM volumes WHERE node = ? ORDER BY id",
                                    node.node));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();
    node.volumes.push_back(VolumeRecord{VolumeId(q->U64(0)), node.node, q->Bytes(1), q->Bytes(2),
                                        q->U64(3), q->U64(4), q->U64(5)});
  }
}

NodeRecord NodeFromRow(const sqlite::Statement& q) {
  NodeRecord n;
  n.node = NodeId(q.U64(0));
  n.host_id = q.Bytes(1);
  n.hostname = q.Bytes(2);
  n.address = q.Bytes(3);
  n.local_socket = q.Bytes(4);
  n.last_heartbeat = Timespec{q.Int(5), q.U32(6)};
  n.admin_state = static_cast<NodeAdminState>(q.U32(7));
  return n;
}

constexpr const char* kNodeColumns =
    "SELECT id, host_id, hostname, address, local_socket, heartbeat_s, heartbeat_ns, admin_state "
    "FROM nodes";

}  // namespace

Result<NodeRecord> SqliteStore::RegisterNode(const NodeRecord& node, Timespec now) {
  NodeRecord stored;
  RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
    NodeId id = node.node;
    {
      // An explicit id is upserted; AUTOINCREMENT then never hands it out.
      ASSIGN_OR_RETURN(
          auto q,
          db_.Query("INSERT INTO nodes (id, host_id, hostname, address, local_socket, heartbeat_s, "
                    "heartbeat_ns) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "host_id = excluded.host_id, hostname = excluded.hostname, "
                    "address = excluded.address, local_socket = excluded.local_socket, "
                    "heartbeat_s = excluded.heartbeat_s, heartbeat_ns = excluded.heartbeat_ns "
                    "RETURNING id",
                    id.valid() ? std::optional(id) : std::nullopt, node.host_id, node.hostname,
                    node.address, node.local_socket, now.sec, now.nsec));
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status(StatusCode::kInternal, "insert node returned no id");
      id = NodeId(q->U64(0));
      RETURN_IF_ERROR(q->Run());
    }
    for (const VolumeRecord& v : node.volumes) {
      if (v.uuid.empty()) return Status(StatusCode::kInvalidArgument, "volume without uuid");
      ASSIGN_OR_RETURN(auto owner, db_.QueryInt("SELECT node FROM volumes WHERE uuid = ?", v.uuid));
      if (owner && static_cast<uint64_t>(*owner) != id.value()) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("volume {} ({}) belongs to node {}, not node {}", v.uuid, v.path,
                                  *owner, id));
      }
      if (owner) {
        RETURN_IF_ERROR(
            db_.Run("UPDATE volumes SET path = ?, total_bytes = ?, free_bytes = ?, "
                    "chunks = ? WHERE uuid = ?",
                    v.path, v.total_bytes, v.free_bytes, v.chunks, v.uuid));
      } else {
        RETURN_IF_ERROR(
            db_.Run("INSERT INTO volumes (node, uuid, path, total_bytes, free_bytes, "
                    "chunks) VALUES (?, ?, ?, ?, ?, ?)",
                    id, v.uuid, v.path, v.total_bytes, v.free_bytes, v.chunks));
      }
    }
    ASSIGN_OR_RETURN(auto q, db_.Query(std::string(kNodeColumns) + " WHERE id = ?", id));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kInternal, fmt::format("node {} vanished", id));
    stored = NodeFromRow(*q);
    return LoadVolumes(db_, stored);
  }));
  return stored;
}

Status SqliteStore::UpdateVolumes(NodeId node, const std::vector<VolumeRecord>& volumes,
                                  Timespec now) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(db_.Run("UPDATE nodes SET heartbeat_s = ?, heartbeat_ns = ? WHERE id = ?",
                            now.sec, now.nsec, node));
    if (db_.Changes() == 0) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", node));
    for (const VolumeRecord& v : volumes) {
      // Matched by id when the node knows it, else by uuid.
      std::optional<int64_t> owner;
      if (v.volume.valid()) {
        ASSIGN_OR_RETURN(owner, db_.QueryInt("SELECT node FROM volumes WHERE id = ?", v.volume));
      } else {
        ASSIGN_OR_RETURN(owner, db_.QueryInt("SELECT node FROM volumes WHERE uuid = ?", v.uuid));
      }
      if (!owner || static_cast<uint64_t>(*owner) != node.value()) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("volume {} ({}) is not a registered volume of node {}", v.volume,
                                  v.uuid, node));
      }
      if (v.volume.valid()) {
        RETURN_IF_ERROR(
            db_.Run("UPDATE volumes SET total_bytes = ?, free_bytes = ?, chunks = ? "
                    "WHERE id = ?",
                    v.total_bytes, v.free_bytes, v.chunks, v.volume));
      } else {
        RETURN_IF_ERROR(
            db_.Run("UPDATE volumes SET total_bytes = ?, free_bytes = ?, chunks = ? "
                    "WHERE uuid = ?",
                    v.total_bytes, v.free_bytes, v.chunks, v.uuid));
      }
    }
    return Status::Ok();
  });
}

Result<std::vector<NodeRecord>> SqliteStore::ListNodes() {
  std::vector<NodeRecord> nodes;
  RETURN_IF_ERROR(Read([&]() -> Status {
    {
      ASSIGN_OR_RETURN(auto q, db_.Query(std::string(kNodeColumns) + " ORDER BY id"));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        nodes.push_back(NodeFromRow(*q));
      }
    }
    for (NodeRecord& n : nodes) RETURN_IF_ERROR(LoadVolumes(db_, n));
    return Status::Ok();
  }));
  return nodes;
}

Result<std::vector<GarbageChunk>> SqliteStore::TakeGarbage(NodeId node, size_t max) {
  std::vector<GarbageChunk> out;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT id, chunk_id, node, volume FROM garbage "
                                       "WHERE node = ? ORDER BY id LIMIT ?",
                                       node, max));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status::Ok();
      out.push_back(
          GarbageChunk{q->U64(0), ChunkId(q->U64(1)), NodeId(q->U64(2)), VolumeId(q->U64(3))});
    }
  }));
  return out;
}

Status SqliteStore::AckGarbage(const std::vector<uint64_t>& ids) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    for (uint64_t id : ids) RETURN_IF_ERROR(db_.Run("DELETE FROM garbage WHERE id = ?", id));
    return Status::Ok();
  });
}

}  // namespace t0fs::meta
