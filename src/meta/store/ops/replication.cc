// Objectives and replication: what the repair planner reads and changes, and
// the administrative state of nodes.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <utility>

#include "common/secret.h"
#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<Objective> SqliteStore::GetObjective(InodeId ino) {
  Objective out;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    out.replicas = attr.replicas;
    out.placement = attr.placement;
    out.nodes = attr.placement_nodes;
    out.chunk_size = attr.chunk_size;
    return Status::Ok();
  }));
  return out;
}

Result<uint64_t> SqliteStore::SetObjective(InodeId ino, const Objective& objective, bool recursive) {
  // The acceptable range is policy (meta/policy.h); the store only refuses
  // what no file can have: no copy at all.
  if (objective.replicas == 0) {
    return Status(StatusCode::kInvalidArgument, "an objective needs at least one replica");
  }
  const std::string nodes = internal::FormatNodeList(objective.nodes);
  // Writes the objective to one inode; true when it is a directory.
  auto apply = [&](InodeId cur) -> Result<bool> {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(cur));
    const bool dir = internal::IsDir(attr.mode);
    // Files keep their chunk size; directories record it for new files.
    const uint64_t chunk_size = dir ? objective.chunk_size : attr.chunk_size;
    RETURN_IF_ERROR(db_.Run(
        "UPDATE inodes SET replicas = ?, placement = ?, placement_nodes = ?, chunk_size = ? "
        "WHERE ino = ?",
        objective.replicas, static_cast<uint32_t>(objective.placement), nodes, chunk_size, cur));
    return dir;
  };

  uint64_t changed = 0;
  // Directories whose entries are still to be visited, breadth-first; the
  // first one is visited from after entry seq `after`.
  std::deque<InodeId> dirs;
  uint64_t after = 0;
  RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(bool dir, apply(ino));
    ++changed;
    if (dir && recursive) dirs.push_back(ino);
    return Status::Ok();
  }));
  // The tree below, in transactions of at most opts_.objective_batch inodes
  // each (directories have one parent, so each inode is visited once;
  // a hard-linked file may be visited twice, which is harmless).
  const size_t batch = std::max<size_t>(opts_.objective_batch, 1);
  while (!dirs.empty()) {
    RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
      size_t budget = batch;
      while (budget > 0 && !dirs.empty()) {
        const InodeId dir = dirs.front();
        std::vector<std::pair<InodeId, uint64_t>> page;  // (ino, seq)
        {
          ASSIGN_OR_RETURN(auto q, db_.Query("SELECT ino, seq FROM dentries WHERE parent = ? AND "
                                             "seq > ? ORDER BY seq LIMIT ?",
                                             dir, after, budget));
          for (;;) {
            ASSIGN_OR_RETURN(bool row, q->Step());
            if (!row) break;
            page.emplace_back(InodeId(q->U64(0)), q->U64(1));
          }
        }
        for (const auto& [child, seq] : page) {
          ASSIGN_OR_RETURN(bool child_dir, apply(child));
          ++changed;
          if (child_dir) dirs.push_back(child);
          after = seq;
        }
        budget -= page.size();
        if (budget > 0) {  // the page was short: `dir` is done
          dirs.pop_front();
          after = 0;
        }
      }
      return Status::Ok();
    }));
  }
  return changed;
}

Result<std::vector<ChunkReplicas>> SqliteStore::ScanReplicas(ChunkId after, size_t max, bool* eof) {
  if (max == 0) return Status(StatusCode::kInvalidArgument, "max must be positive");
  std::vector<ChunkReplicas> out;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(
        auto q,
        db_.Query("SELECT c.id, c.ino, c.idx, i.chunk_size, i.replicas, i.placement, i.placement_nodes, "
                  "r.node, r.volume, r.version, r.state FROM chunks c "
                  "JOIN inodes i ON i.ino = c.ino JOIN replicas r ON r.chunk_id = c.id "
                  "WHERE c.id IN (SELECT id FROM chunks WHERE id > ? ORDER BY id LIMIT ?) "
                  "ORDER BY c.id, r.pos",
                  after, max + 1));
    *eof = true;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status::Ok();
      ChunkId chunk(q->U64(0));
      if (out.empty() || out.back().chunk != chunk) {
        if (out.size() == max) {
          *eof = false;
          return Status::Ok();
        }
        ChunkReplicas c;
        c.chunk = chunk;
        c.ino = InodeId(q->U64(1));
        c.index = q->U64(2);
        c.chunk_size = q->U64(3);
        c.objective.replicas = q->U32(4);
        c.objective.placement = static_cast<Placement>(q->U32(5));
        c.objective.nodes = internal::ParseNodeList(q->Bytes(6));
        out.push_back(std::move(c));
      }
      out.back().replicas.push_back(Replica{NodeId(q->U64(7)), VolumeId(q->U64(8)), chunk, q->U64(9),
                                            static_cast<ReplicaState>(q->U32(10))});
    }
  }));
  return out;
}

Status SqliteStore::SetReplicaState(ChunkId chunk, NodeId node, ReplicaState state) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto found, db_.QueryInt("SELECT 1 FROM replicas WHERE chunk_id = ? AND node = ?",
                                              chunk, node));
    if (!found) return Status(StatusCode::kNotFound, fmt::format("no replica of chunk {} on node {}", chunk, node));
    return db_.Run("UPDATE replicas SET state = ? WHERE chunk_id = ? AND node = ?", state, chunk, node);
  });
}

Status SqliteStore::AddPendingReplica(ChunkId chunk, NodeId node, VolumeId volume) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto exists, db_.QueryInt("SELECT 1 FROM chunks WHERE id = ?", chunk));
    if (!exists) return Status(StatusCode::kNotFound, fmt::format("chunk {}", chunk));
    ASSIGN_OR_RETURN(auto vol, db_.QueryInt("SELECT 1 FROM volumes WHERE id = ? AND node = ?", volume, node));
    if (!vol) return Status(StatusCode::kInvalidArgument, fmt::format("volume {} is not on node {}", volume, node));
    ASSIGN_OR_RETURN(auto here, db_.QueryInt("SELECT 1 FROM replicas WHERE chunk_id = ? AND node = ?",
                                             chunk, node));
    if (here) {
      // The node's copy is stale or corrupt: it is overwritten in place.
      return db_.Run("UPDATE replicas SET state = ?, volume = ? WHERE chunk_id = ? AND node = ?",
                     ReplicaState::kPending, volume, chunk, node);
    }
    ASSIGN_OR_RETURN(auto pos, db_.QueryInt("SELECT COALESCE(MAX(pos), -1) + 1 FROM replicas WHERE chunk_id = ?",
                                            chunk));
    return db_.Run("INSERT INTO replicas (chunk_id, pos, node, volume, version, state) VALUES (?, ?, ?, ?, 0, ?)",
                   chunk, pos.value_or(0), node, volume, ReplicaState::kPending);
  });
}

Status SqliteStore::CompleteReplica(ChunkId chunk, NodeId node, uint64_t version) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto state, db_.QueryInt("SELECT state FROM replicas WHERE chunk_id = ? AND node = ?",
                                              chunk, node));
    if (!state) return Status(StatusCode::kNotFound, fmt::format("no replica of chunk {} on node {}", chunk, node));
    ASSIGN_OR_RETURN(auto committed,
                     db_.QueryInt("SELECT COALESCE(MAX(version), 0) FROM replicas WHERE chunk_id = ? "
                                  "AND state = ? AND node != ?",
                                  chunk, ReplicaState::kHealthy, node));
    if (static_cast<uint64_t>(committed.value_or(0)) > version) {
      return Status(StatusCode::kStale, fmt::format("chunk {} moved to version {} during the copy (copied {})",
                                                    chunk, *committed, version));
    }
    return db_.Run("UPDATE replicas SET state = ?, version = ? WHERE chunk_id = ? AND node = ?",
                   ReplicaState::kHealthy, version, chunk, node);
  });
}

Status SqliteStore::DropReplica(ChunkId chunk, NodeId node) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(db_.Run(
        "INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
        "SELECT c.id, c.ino, c.idx, r.node, r.volume, r.version FROM chunks c "
        "JOIN replicas r ON r.chunk_id = c.id WHERE c.id = ? AND r.node = ?",
        chunk, node));
    return db_.Run("DELETE FROM replicas WHERE chunk_id = ? AND node = ?", chunk, node);
  });
}

Status SqliteStore::SetNodeAdminState(NodeId node, NodeAdminState state) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto found, db_.QueryInt("SELECT 1 FROM nodes WHERE id = ?", node));
    if (!found) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", node));
    return db_.Run("UPDATE nodes SET admin_state = ? WHERE id = ?", static_cast<uint32_t>(state), node);
  });
}

Result<std::string> SqliteStore::CapabilityKey() {
  std::string key;
  RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT value FROM meta WHERE key = 'capability_key'"));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (row) {
      key = q->Bytes(0);
      return Status::Ok();
    }
    key = HexEncode(RandomBytes(32));
    return db_.Run("INSERT INTO meta (key, value) VALUES ('capability_key', ?)", key);
  }));
  return key;
}

Result<bool> SqliteStore::HasWriteHandle(SessionId session, InodeId ino) {
  bool found = false;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(auto q, db_.QueryInt("SELECT 1 FROM handles WHERE session = ? AND ino = ? AND "
                                          "(flags & 3) != 0 LIMIT 1",
                                          session, ino));
    found = q.has_value();
    return Status::Ok();
  }));
  return found;
}

}  // namespace t0fs::meta
