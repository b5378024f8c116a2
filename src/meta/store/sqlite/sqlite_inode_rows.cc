// Row codecs of the SQLite engine: inodes, dentries, xattrs.
#include <fmt/format.h>

#include "meta/store/sqlite/sqlite_rows.h"

namespace t0fs::meta::sqlite {
namespace {

// The inode columns InodeFromRow reads, in order (prefixed for the join).
constexpr const char* kInodeColumns =
    "ino, mode, uid, gid, size, nlink, rdev, atime_s, atime_ns, mtime_s, mtime_ns, ctime_s, "
    "ctime_ns, chunk_size, generation, replicas, placement, placement_nodes, target, parent, "
    "entry_seq, protect, protect_within";
constexpr const char* kJoinedInodeColumns =
    "i.ino, i.mode, i.uid, i.gid, i.size, i.nlink, i.rdev, i.atime_s, i.atime_ns, i.mtime_s, "
    "i.mtime_ns, i.ctime_s, i.ctime_ns, i.chunk_size, i.generation, i.replicas, i.placement, "
    "i.placement_nodes, i.target, i.parent, i.entry_seq, i.protect, i.protect_within";

InodeRow InodeFromRow(const Statement& q, int c) {
  InodeRow row;
  InodeAttr& a = row.attr;
  a.ino = InodeId(q.U64(c));
  a.mode = q.U32(c + 1);
  a.uid = q.U32(c + 2);
  a.gid = q.U32(c + 3);
  a.size = q.U64(c + 4);
  a.nlink = q.U32(c + 5);
  a.rdev = q.U32(c + 6);
  a.atime = Timespec{q.Int(c + 7), q.U32(c + 8)};
  a.mtime = Timespec{q.Int(c + 9), q.U32(c + 10)};
  a.ctime = Timespec{q.Int(c + 11), q.U32(c + 12)};
  a.chunk_size = q.U64(c + 13);
  a.generation = q.U64(c + 14);
  a.replicas = q.U32(c + 15);
  a.placement = static_cast<Placement>(q.U32(c + 16));
  a.placement_nodes = ParseNodeList(q.Bytes(c + 17));
  row.target = q.Bytes(c + 18);
  row.parent = InodeId(q.U64(c + 19));
  row.entry_seq = q.U64(c + 20);
  a.protect = UnpackProtection(q.U64(c + 21), q.U64(c + 22));
  return row;
}

DentryRow DentryFromRow(const Statement& q, int c) {
  return DentryRow{InodeId(q.U64(c)), q.Bytes(c + 1), InodeId(q.U64(c + 2)), q.U64(c + 3)};
}

template <typename Row, typename Decode>
Status VisitRows(StatementLease& q, const RowVisitor<Row>& visit, Decode decode) {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();
    RETURN_IF_ERROR(visit(decode(*q)));
  }
}

}  // namespace

// ---- inodes ----

Result<std::optional<InodeRow>> GetInode(Db& db, InodeId ino) {
  static const std::string sql = fmt::format("SELECT {} FROM inodes WHERE ino = ?", kInodeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, ino));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return std::optional<InodeRow>();
  return std::optional<InodeRow>(InodeFromRow(*q, 0));
}

Status ScanInodes(Db& db, const RowVisitor<InodeRow>& visit) {
  static const std::string sql = fmt::format("SELECT {} FROM inodes ORDER BY ino", kInodeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return VisitRows(q, visit, [](const Statement& s) { return InodeFromRow(s, 0); });
}

Status PutInode(Db& db, const InodeRow& row) {
  const InodeAttr& a = row.attr;
  return db.Run(
      "INSERT INTO inodes (ino, mode, uid, gid, size, nlink, rdev, atime_s, atime_ns, mtime_s, "
      "mtime_ns, ctime_s, ctime_ns, chunk_size, generation, replicas, placement, placement_nodes, "
      "target, parent, entry_seq, protect, protect_within) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ino) DO UPDATE SET mode = excluded.mode, uid = "
      "excluded.uid, "
      "gid = excluded.gid, size = excluded.size, nlink = excluded.nlink, rdev = excluded.rdev, "
      "atime_s = excluded.atime_s, atime_ns = excluded.atime_ns, mtime_s = excluded.mtime_s, "
      "mtime_ns = excluded.mtime_ns, ctime_s = excluded.ctime_s, ctime_ns = excluded.ctime_ns, "
      "chunk_size = excluded.chunk_size, generation = excluded.generation, "
      "replicas = excluded.replicas, placement = excluded.placement, "
      "placement_nodes = excluded.placement_nodes, target = excluded.target, "
      "parent = excluded.parent, entry_seq = excluded.entry_seq, protect = excluded.protect, "
      "protect_within = excluded.protect_within",
      a.ino, a.mode, a.uid, a.gid, a.size, a.nlink, a.rdev, a.atime.sec, a.atime.nsec, a.mtime.sec,
      a.mtime.nsec, a.ctime.sec, a.ctime.nsec, a.chunk_size, a.generation, a.replicas,
      static_cast<uint32_t>(a.placement), FormatNodeList(a.placement_nodes),
      row.target.empty() ? std::nullopt : std::optional(Blob{row.target}), row.parent,
      row.entry_seq, PackProtection(a.protect), a.protect.within_s);
}

Status DeleteInode(Db& db, InodeId ino) {
  RETURN_IF_ERROR(db.Run("DELETE FROM xattrs WHERE ino = ?", ino));
  return db.Run("DELETE FROM inodes WHERE ino = ?", ino);
}

// ---- dentries ----

Result<std::optional<DentryRow>> GetDentry(Db& db, InodeId parent, std::string_view name) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT parent, name, ino, seq FROM dentries "
                                    "WHERE parent = ? AND name = ?",
                                    parent, Blob{name}));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return std::optional<DentryRow>();
  return std::optional<DentryRow>(DentryFromRow(*q, 0));
}

Result<std::vector<DirItem>> ListDir(Db& db, InodeId parent, uint64_t after_seq, size_t limit,
                                     bool with_inodes) {
  std::vector<DirItem> out;
  if (limit == 0) return out;
  if (!with_inodes) {
    ASSIGN_OR_RETURN(auto q, db.Query("SELECT parent, name, ino, seq FROM dentries "
                                      "WHERE parent = ? AND seq > ? ORDER BY seq LIMIT ?",
                                      parent, after_seq, limit));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return out;
      out.push_back(DirItem{DentryFromRow(*q, 0), std::nullopt});
    }
  }
  static const std::string sql = fmt::format(
      "SELECT d.parent, d.name, d.ino, d.seq, {} FROM dentries d LEFT JOIN inodes i "
      "ON i.ino = d.ino WHERE d.parent = ? AND d.seq > ? ORDER BY d.seq LIMIT ?",
      kJoinedInodeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, parent, after_seq, limit));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    DirItem item{DentryFromRow(*q, 0), std::nullopt};
    if (!q->IsNull(4)) item.inode = InodeFromRow(*q, 4);
    out.push_back(std::move(item));
  }
}

Status ScanDentries(Db& db, const RowVisitor<DentryRow>& visit) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT parent, name, ino, seq FROM dentries "
                                    "ORDER BY parent, name"));
  return VisitRows(q, visit, [](const Statement& s) { return DentryFromRow(s, 0); });
}

Status PutDentry(Db& db, const DentryRow& row) {
  return db.Run(
      "INSERT INTO dentries (parent, name, ino, seq) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (parent, name) DO UPDATE SET ino = excluded.ino, seq = excluded.seq",
      row.parent, Blob{row.name}, row.ino, row.seq);
}

Status DeleteDentry(Db& db, InodeId parent, std::string_view name) {
  return db.Run("DELETE FROM dentries WHERE parent = ? AND name = ?", parent, Blob{name});
}

// ---- xattrs ----

Result<std::optional<std::string>> GetXattr(Db& db, InodeId ino, std::string_view name) {
  ASSIGN_OR_RETURN(
      auto q, db.Query("SELECT value FROM xattrs WHERE ino = ? AND name = ?", ino, Blob{name}));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q->Bytes(0));
}

Result<std::vector<std::string>> ListXattrNames(Db& db, InodeId ino) {
  std::vector<std::string> names;
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT name FROM xattrs WHERE ino = ? ORDER BY name", ino));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return names;
    names.push_back(q->Bytes(0));
  }
}

Status ScanXattrs(Db& db, const RowVisitor<XattrRow>& visit) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT ino, name, value FROM xattrs ORDER BY ino, name"));
  return VisitRows(q, visit, [](const Statement& s) {
    return XattrRow{InodeId(s.U64(0)), s.Bytes(1), s.Bytes(2)};
  });
}

Status PutXattr(Db& db, InodeId ino, std::string_view name, std::string_view value) {
  return db.Run(
      "INSERT INTO xattrs (ino, name, value) VALUES (?, ?, ?) "
      "ON CONFLICT (ino, name) DO UPDATE SET value = excluded.value",
      ino, Blob{name}, Blob{value});
}

Status DeleteXattr(Db& db, InodeId ino, std::string_view name) {
  return db.Run("DELETE FROM xattrs WHERE ino = ? AND name = ?", ino, Blob{name});
}

}  // namespace t0fs::meta::sqlite
