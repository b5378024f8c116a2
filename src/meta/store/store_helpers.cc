// SqliteStore helpers shared by several operations: loading inodes and
// entries, link counts, times, and freeing inodes and chunks.
#include <fmt/format.h>

#include "meta/store/chunk_math.h"
#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

using internal::IsDir;

Result<InodeAttr> SqliteStore::LoadAttr(InodeId ino) {
  ASSIGN_OR_RETURN(auto q, db_.Query("SELECT ino, mode, uid, gid, size, nlink, rdev, atime_s, "
                                     "atime_ns, mtime_s, mtime_ns, ctime_s, ctime_ns, chunk_size, "
                                     "generation, replicas, placement, placement_nodes FROM inodes "
                                     "WHERE ino = ?",
                                     ino));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return Status(StatusCode::kNotFound, fmt::format("inode {}", ino));
  return internal::AttrFromRow(*q, 0);
}

Result<InodeAttr> SqliteStore::LoadDir(InodeId dir) {
  ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(dir));
  if (!IsDir(attr.mode)) {
    return Status(StatusCode::kNotDirectory, fmt::format("inode {} is not a directory", dir));
  }
  if (attr.nlink == 0) {
    return Status(StatusCode::kNotFound, fmt::format("directory {} was removed", dir));
  }
  return attr;
}

Result<std::optional<SqliteStore::Dentry>> SqliteStore::FindDentry(InodeId parent,
                                                                   std::string_view name) {
  ASSIGN_OR_RETURN(auto q, db_.Query("SELECT seq, ino FROM dentries WHERE parent = ? AND name = ?",
                                     parent, sqlite::Blob{name}));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return std::optional<Dentry>();
  return std::optional<Dentry>(Dentry{q->U64(0), InodeId(q->U64(1))});
}

Result<InodeId> SqliteStore::ParentOf(InodeId dir) {
  if (dir == kRootInode) return dir;
  ASSIGN_OR_RETURN(auto parent, db_.QueryInt("SELECT parent FROM inodes WHERE ino = ?", dir));
  if (!parent || *parent == 0) return dir;
  return InodeId(static_cast<uint64_t>(*parent));
}

Result<bool> SqliteStore::IsWithin(InodeId dir, InodeId ancestor) {
  // Walks up from `dir`. The step bound only guards against a corrupt
  // (cyclic) tree; a real tree is never that deep.
  InodeId cur = dir;
  for (int steps = 0; steps < 1000000; ++steps) {
    if (cur == ancestor) return true;
    if (cur == kRootInode) return false;
    ASSIGN_OR_RETURN(InodeId up, ParentOf(cur));
    if (up == cur) return false;
    cur = up;
  }
  return Status(StatusCode::kCorruption, fmt::format("directory {} has no path to the root", dir));
}

Status SqliteStore::InsertDentry(InodeId parent, std::string_view name, InodeId ino) {
  ASSIGN_OR_RETURN(auto seq, db_.QueryInt("UPDATE inodes SET entry_seq = entry_seq + 1 "
                                          "WHERE ino = ? RETURNING entry_seq",
                                          parent));
  if (!seq) return Status(StatusCode::kNotFound, fmt::format("directory {}", parent));
  return db_.Run("INSERT INTO dentries (parent, name, ino, seq) VALUES (?, ?, ?, ?)", parent,
                 sqlite::Blob{name}, ino, *seq);
}

Status SqliteStore::DeleteDentry(InodeId parent, std::string_view name) {
  return db_.Run("DELETE FROM dentries WHERE parent = ? AND name = ?", parent,
                 sqlite::Blob{name});
}

Status SqliteStore::RepointDentry(InodeId parent, std::string_view name, InodeId ino) {
  return db_.Run("UPDATE dentries SET ino = ? WHERE parent = ? AND name = ?", ino, parent,
                 sqlite::Blob{name});
}

Status SqliteStore::SetParent(InodeId dir, InodeId parent) {
  return db_.Run("UPDATE inodes SET parent = ? WHERE ino = ?", parent, dir);
}

Status SqliteStore::TouchDir(InodeId dir, Timespec now) {
  return db_.Run(
      "UPDATE inodes SET mtime_s = ?, mtime_ns = ?, ctime_s = ?, ctime_ns = ? "
      "WHERE ino = ?",
      now.sec, now.nsec, now.sec, now.nsec, dir);
}

Status SqliteStore::TouchCtime(InodeId ino, Timespec now) {
  return db_.Run("UPDATE inodes SET ctime_s = ?, ctime_ns = ? WHERE ino = ?", now.sec, now.nsec,
                 ino);
}

Status SqliteStore::AddNlink(InodeId ino, int64_t delta) {
  return db_.Run("UPDATE inodes SET nlink = nlink + ? WHERE ino = ?", delta, ino);
}

Status SqliteStore::DropLink(InodeId ino, Timespec now) {
  RETURN_IF_ERROR(
      db_.Run("UPDATE inodes SET nlink = nlink - 1, ctime_s = ?, ctime_ns = ? "
              "WHERE ino = ? AND nlink > 0",
              now.sec, now.nsec, ino));
  return FreeIfOrphan(ino);
}

Status SqliteStore::RemoveDir(InodeId dir, InodeId parent, Timespec now) {
  // A removed directory is its own parent ("..": itself).
  RETURN_IF_ERROR(db_.Run("UPDATE inodes SET nlink = 0, parent = ino, ctime_s = ?, ctime_ns = ? "
                          "WHERE ino = ?",
                          now.sec, now.nsec, dir));
  RETURN_IF_ERROR(AddNlink(parent, -1));
  return FreeIfOrphan(dir);
}

Status SqliteStore::FreeIfOrphan(InodeId ino) {
  ASSIGN_OR_RETURN(auto orphan,
                   db_.QueryInt("SELECT 1 FROM inodes i WHERE i.ino = ? AND i.nlink = 0 AND "
                                "NOT EXISTS (SELECT 1 FROM handles h WHERE h.ino = i.ino)",
                                ino));
  if (!orphan) return Status::Ok();
  return FreeInode(ino);
}

Status SqliteStore::FreeInode(InodeId ino) {
  RETURN_IF_ERROR(DropChunksFrom(ino, 0));
  RETURN_IF_ERROR(db_.Run("DELETE FROM xattrs WHERE ino = ?", ino));
  return db_.Run("DELETE FROM inodes WHERE ino = ?", ino);
}

Status SqliteStore::DropChunksFrom(InodeId ino, uint64_t first_idx) {
  if (first_idx > internal::kMaxFileSize) return Status::Ok();  // no index can be that large
  RETURN_IF_ERROR(db_.Run(
      "INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
      "SELECT c.id, c.ino, c.idx, r.node, r.volume, r.version FROM chunks c "
      "JOIN replicas r ON r.chunk_id = c.id WHERE c.ino = ? AND c.idx >= ? ORDER BY c.id, r.pos",
      ino, first_idx));
  RETURN_IF_ERROR(
      db_.Run("DELETE FROM replicas WHERE chunk_id IN "
              "(SELECT id FROM chunks WHERE ino = ? AND idx >= ?)",
              ino, first_idx));
  return db_.Run("DELETE FROM chunks WHERE ino = ? AND idx >= ?", ino, first_idx);
}

Status SqliteStore::DropUnwrittenTail(InodeId ino) {
  uint64_t size = 0;
  uint64_t chunk_size = 0;
  {
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT size, chunk_size FROM inodes WHERE ino = ?", ino));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();  // nothing of it is left
    size = q->U64(0);
    chunk_size = q->U64(1);
  }
  // Chunks wholly past the end of which no replica ever took a write
  // (version 0).
  const uint64_t first = ChunksCovering(size, chunk_size);
  if (chunk_size == 0 || first > internal::kMaxFileSize) return Status::Ok();
  constexpr const char* kTail =
      "SELECT c.id FROM chunks c WHERE c.ino = ? AND c.idx >= ? AND "
      "NOT EXISTS (SELECT 1 FROM replicas r WHERE r.chunk_id = c.id AND r.version > 0)";
  RETURN_IF_ERROR(db_.Run(fmt::format("INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
                                      "SELECT c.id, c.ino, c.idx, r.node, r.volume, r.version FROM chunks c "
                                      "JOIN replicas r ON r.chunk_id = c.id WHERE c.id IN ({}) ORDER BY c.id, r.pos",
                                      kTail),
                          ino, first));
  RETURN_IF_ERROR(db_.Run(fmt::format("DELETE FROM replicas WHERE chunk_id IN ({})", kTail), ino, first));
  return db_.Run(fmt::format("DELETE FROM chunks WHERE id IN ({})", kTail), ino, first);
}

Status SqliteStore::Truncate(const InodeAttr& attr, uint64_t new_size, Timespec now, uint64_t keep_chunks) {
  if (new_size > internal::kMaxFileSize) {
    return Status(StatusCode::kFileTooBig, fmt::format("size {}", new_size));
  }
  RETURN_IF_ERROR(DropChunksFrom(
      attr.ino, ChunksKeptByTruncate(attr.size, new_size, attr.chunk_size, keep_chunks)));
  return db_.Run(
      "UPDATE inodes SET size = ?, mtime_s = ?, mtime_ns = ?, ctime_s = ?, "
      "ctime_ns = ? WHERE ino = ?",
      new_size, now.sec, now.nsec, now.sec, now.nsec, attr.ino);
}

Result<std::vector<ChunkLayout>> SqliteStore::LoadLayouts(InodeId ino,
                                                          const std::vector<uint64_t>& indices) {
  std::vector<ChunkLayout> out;
  out.reserve(indices.size());
  for (uint64_t idx : indices) {
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT r.chunk_id, r.node, r.volume, r.version, r.state "
                                       "FROM chunks c JOIN replicas r ON r.chunk_id = c.id "
                                       "WHERE c.ino = ? AND c.idx = ? ORDER BY r.pos",
                                       ino, idx));
    ChunkLayout layout{idx, {}};
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) break;
      layout.replicas.push_back(Replica{NodeId(q->U64(1)), VolumeId(q->U64(2)), ChunkId(q->U64(0)),
                                        q->U64(3), static_cast<ReplicaState>(q->U32(4))});
    }
    if (!layout.replicas.empty()) out.push_back(std::move(layout));
  }
  return out;
}

Status SqliteStore::RequireSession(SessionId session) {
  ASSIGN_OR_RETURN(auto found, db_.QueryInt("SELECT 1 FROM sessions WHERE id = ?", session));
  if (!found) return Status(StatusCode::kMetaNoSession, fmt::format("session {}", session));
  return Status::Ok();
}

}  // namespace t0fs::meta
