// PgTxn: inodes, directory entries, extended attributes.
#include <fmt/format.h>

#include "meta/store/pg/pg_txn.h"

namespace t0fs::meta {

using pgrows::Id64;
using pgrows::InodeAt;
using pgrows::kInodeColumnCount;
using pgrows::Limit;
using pgrows::Stmt;
using pgrows::U;

namespace {

#define T0FS_PG_INODE_COLUMNS T0FS_PG_INODE_COLUMNS_OF("")
#define T0FS_PG_JOINED_INODE_COLUMNS T0FS_PG_INODE_COLUMNS_OF("i.")
// The inode of entry alias `d`, as alias i.
#define T0FS_PG_INODE_OF_ENTRY T0FS_PG_LOOKUP_JOIN("inodes", "ino = d.ino", "i")

constexpr Stmt kGetInode{"get_inode",
                         "SELECT " T0FS_PG_INODE_COLUMNS " FROM inodes WHERE ino = $1"};
constexpr Stmt kScanInodes{"scan_inodes", "SELECT " T0FS_PG_INODE_COLUMNS
                                          " FROM inodes WHERE ino > $1 ORDER BY ino LIMIT $2"};
constexpr Stmt kPutInode{
    "put_inode",
    "INSERT INTO inodes (" T0FS_PG_INODE_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, "
    "$19, $20, $21, $22, $23) "
    "ON CONFLICT (ino) DO UPDATE SET mode = excluded.mode, uid = excluded.uid, gid = excluded.gid, "
    "size = excluded.size, nlink = excluded.nlink, rdev = excluded.rdev, atime_s = "
    "excluded.atime_s, "
    "atime_ns = excluded.atime_ns, mtime_s = excluded.mtime_s, mtime_ns = excluded.mtime_ns, "
    "ctime_s = excluded.ctime_s, ctime_ns = excluded.ctime_ns, chunk_size = excluded.chunk_size, "
    "generation = excluded.generation, replicas = excluded.replicas, placement = "
    "excluded.placement, "
    "placement_nodes = excluded.placement_nodes, target = excluded.target, parent = "
    "excluded.parent, "
    "entry_seq = excluded.entry_seq, protect = excluded.protect, protect_within = "
    "excluded.protect_within"};
// With its extended attributes, in one statement (a removal sent two: one
// of about eleven statements, each some 40 µs of the server's CPU here).
constexpr Stmt kDeleteInode{"delete_inode",
                            "WITH x AS (DELETE FROM xattrs WHERE ino = $1) "
                            "DELETE FROM inodes WHERE ino = $1"};

// With the entry's inode, which the caller nearly always loads next (kept
// in PgTxn::inodes_: one round trip instead of two).
constexpr Stmt kGetDentry{"get_dentry_inode",
                          "SELECT d.parent, d.name, d.ino, d.seq, " T0FS_PG_JOINED_INODE_COLUMNS
                          " FROM dentries d" T0FS_PG_INODE_OF_ENTRY
                          "WHERE d.parent = $1 AND d.name = $2"};
// A directory (columns kDirColumn..), its entry (0..3) and the entry's inode (4..):
// no row when the directory does not exist, NULLs when the entry does not.
constexpr Stmt kGetDirEntry{
    "get_dir_entry",
    "SELECT d.parent, d.name, d.ino, d.seq, " T0FS_PG_JOINED_INODE_COLUMNS
    ", " T0FS_PG_INODE_COLUMNS_OF("p.") " FROM inodes p" T0FS_PG_LOOKUP_JOIN(
        "dentries", "parent = p.ino AND name = $2", "d") T0FS_PG_INODE_OF_ENTRY "WHERE p.ino = $1"};
constexpr int kDirColumn = 4 + kInodeColumnCount;
// The listings say `seq > 0` (true of every entry): it is the partial
// index dentries_by_parent_seq's condition (pg_schema.cc), which a
// parameter ($2) alone does not imply.
constexpr Stmt kListDir{
    "list_dir",
    "SELECT parent, name, ino, seq FROM dentries WHERE parent = $1 AND seq > $2 AND seq > 0 "
    "ORDER BY seq LIMIT $3"};
// The first entry (as kListDir from seq 0) of the directory entry ($1, $2)
// names, with that directory last: no row when there is no such entry, one
// with NULL entry columns when the directory is empty (or not one).
constexpr Stmt kFirstEntryOfEntry{
    "first_entry_of_entry",
    "SELECT d.parent, d.name, d.ino, d.seq, e.ino FROM dentries e LEFT JOIN LATERAL "
    "(SELECT parent, name, ino, seq FROM dentries WHERE parent = e.ino AND seq > 0 "
    "ORDER BY seq LIMIT 1) d ON true WHERE e.parent = $1 AND e.name = $2"};
constexpr Stmt kListDirInodes{
    "list_dir_inodes", "SELECT d.parent, d.name, d.ino, d.seq, " T0FS_PG_JOINED_INODE_COLUMNS
                       " FROM dentries d" T0FS_PG_INODE_OF_ENTRY
                       "WHERE d.parent = $1 AND d.seq > $2 AND d.seq > 0 ORDER BY d.seq LIMIT $3"};
constexpr Stmt kScanDentries{
    "scan_dentries",
    "SELECT parent, name, ino, seq FROM dentries WHERE (parent, name) > ($1, $2) "
    "ORDER BY parent, name LIMIT $3"};
constexpr Stmt kPutDentry{
    "put_dentry",
    "INSERT INTO dentries (parent, name, ino, seq) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (parent, name) DO UPDATE SET ino = excluded.ino, seq = excluded.seq"};
constexpr Stmt kDeleteDentry{"delete_dentry",
                             "DELETE FROM dentries WHERE parent = $1 AND name = $2"};

constexpr Stmt kGetXattr{"get_xattr", "SELECT value FROM xattrs WHERE ino = $1 AND name = $2"};
constexpr Stmt kListXattrNames{"list_xattr_names",
                               "SELECT name FROM xattrs WHERE ino = $1 ORDER BY name"};
constexpr Stmt kScanXattrs{"scan_xattrs",
                           "SELECT ino, name, value FROM xattrs WHERE (ino, name) > ($1, $2) "
                           "ORDER BY ino, name LIMIT $3"};
constexpr Stmt kPutXattr{"put_xattr",
                         "INSERT INTO xattrs (ino, name, value) VALUES ($1, $2, $3) "
                         "ON CONFLICT (ino, name) DO UPDATE SET value = excluded.value"};
constexpr Stmt kDeleteXattr{"delete_xattr", "DELETE FROM xattrs WHERE ino = $1 AND name = $2"};

// placement_nodes is a bigint[]: "{4,17}" in text form.
std::string NodeArray(const std::vector<NodeId>& nodes) {
  std::string out = "{";
  for (NodeId n : nodes) out += fmt::format("{}{}", out.size() > 1 ? "," : "", n.value());
  return out + "}";
}

std::vector<NodeId> NodesOfArray(std::string_view text) {
  std::vector<NodeId> out;
  uint64_t v = 0;
  bool digits = false;
  for (char ch : text) {
    if (ch >= '0' && ch <= '9') {
      v = v * 10 + static_cast<uint64_t>(ch - '0');
      digits = true;
    } else if (digits) {
      out.push_back(NodeId(v));
      v = 0;
      digits = false;
    }
  }
  return out;
}

InodeRow InodeOfRow(const pg::Rows& q, int r) {
  return InodeAt(q, r, 0);
}
std::vector<pg::Param> InodeKey(const InodeRow& row) {
  return {Id64(row.attr.ino)};
}

DentryRow DentryOfRow(const pg::Rows& q, int r) {
  return DentryRow{InodeId(q.UInt(r, 0)), q.Bytes(r, 1), InodeId(q.UInt(r, 2)), q.UInt(r, 3)};
}
std::vector<pg::Param> DentryKey(const DentryRow& row) {
  return {Id64(row.parent), pg::Param::Bytes(row.name)};
}
// kFirstEntryOfEntry's row (NULL entry columns: the directory is empty).
std::optional<DentryRow> FirstEntryOfRows(const pg::Rows& q) {
  if (q.IsNull(0, 0)) return std::nullopt;
  return DentryOfRow(q, 0);
}

XattrRow XattrOfRow(const pg::Rows& q, int r) {
  return XattrRow{InodeId(q.UInt(r, 0)), q.Bytes(r, 1), q.Bytes(r, 2)};
}
std::vector<pg::Param> XattrKey(const XattrRow& row) {
  return {Id64(row.ino), pg::Param::Bytes(row.name)};
}

}  // namespace

// ---- inodes ----

Result<std::optional<InodeRow>> PgTxn::GetInode(InodeId ino) {
  RETURN_IF_ERROR(Settle());
  if (!failed_.ok()) return failed_;
  if (auto known = inodes_.find(ino.value()); known != inodes_.end()) return known->second;
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetInode, {Id64(ino)}));
  std::optional<InodeRow> row;
  if (rows.size() > 0) row = InodeAt(rows, 0, 0);
  inodes_[ino.value()] = row;
  return row;
}

Status PgTxn::ScanInodes(const RowVisitor<InodeRow>& visit) {
  return ScanPaged<InodeRow>(kScanInodes, {pg::Param(INT64_MIN)}, InodeOfRow, InodeKey, visit);
}

Status PgTxn::PutInode(const InodeRow& row) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  inodes_[row.attr.ino.value()] = row;
  unqueued_inodes_.insert(row.attr.ino.value());
  return Status::Ok();
}

Status PgTxn::DeleteInode(InodeId ino) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  inodes_[ino.value()] = std::nullopt;
  unqueued_inodes_.insert(ino.value());
  return Status::Ok();
}

Status PgTxn::QueueDeleteOf(InodeId ino) {
  auto it = inodes_.find(ino.value());
  if (it == inodes_.end() || it->second || !unqueued_inodes_.count(ino.value()))
    return Status::Ok();
  return QueueInodeWrites();
}

Status PgTxn::QueueInodeWrites() {
  std::set<uint64_t> inos;
  inos.swap(unqueued_inodes_);
  for (uint64_t ino : inos) {
    const std::optional<InodeRow>& row = inodes_.at(ino);
    RETURN_IF_ERROR(row ? QueueInodeWrite(*row) : Exec(kDeleteInode, {U(ino)}));
  }
  return Status::Ok();
}

Status PgTxn::QueueInodeWrite(const InodeRow& row) {
  const InodeAttr& a = row.attr;
  return Exec(kPutInode, {Id64(a.ino),
                          U(a.mode),
                          U(a.uid),
                          U(a.gid),
                          U(a.size),
                          U(a.nlink),
                          U(a.rdev),
                          pg::Param(a.atime.sec),
                          U(a.atime.nsec),
                          pg::Param(a.mtime.sec),
                          U(a.mtime.nsec),
                          pg::Param(a.ctime.sec),
                          U(a.ctime.nsec),
                          U(a.chunk_size),
                          U(a.generation),
                          U(a.replicas),
                          U(static_cast<uint32_t>(a.placement)),
                          pg::Param(NodeArray(a.placement_nodes)),
                          pg::Param::Bytes(row.target),
                          Id64(row.parent),
                          U(row.entry_seq),
                          U(PackProtection(a.protect)),
                          U(a.protect.within_s)});
}

// ---- dentries ----

Status PgTxn::PrefetchEntry(InodeId dir, std::string_view name) {
  if (!failed_.ok()) return failed_;
  // A directory known already (read or written here) is not read again:
  // GetDentry then reads the entry alone.
  if (inodes_.count(dir.value())) return Status::Ok();
  const uint64_t writes = entry_writes_;
  return Prefetch(kGetDirEntry, {Id64(dir), pg::Param::Bytes(name)},
                  [this, dir, name = std::string(name), writes](const pg::Rows& rows) {
                    // Rows written meanwhile (queued after this read) win.
                    if (rows.size() == 0) {
                      inodes_.emplace(dir.value(), std::nullopt);
                      return;
                    }
                    inodes_.emplace(dir.value(), InodeAt(rows, 0, kDirColumn));
                    PrefetchedEntry found{dir, name, std::nullopt};
                    if (!rows.IsNull(0, 0)) {
                      found.entry = DentryOfRow(rows, 0);
                      if (!rows.IsNull(0, 4))
                        inodes_.emplace(found.entry->ino.value(), InodeAt(rows, 0, 4));
                    }
                    if (entry_writes_ == writes) prefetched_.push_back(std::move(found));
                  });
}

Status PgTxn::PrefetchRemoval(InodeId dir, std::string_view name, bool directory) {
  RETURN_IF_ERROR(PrefetchHandlesOfEntry(dir, name));
  return directory ? PrefetchFirstEntryOfEntry(dir, name) : PrefetchChunksOfEntry(dir, name);
}

Status PgTxn::PrefetchRelease(HandleId handle) {
  RETURN_IF_ERROR(PrefetchHandleAndInode(handle));
  return PrefetchTailChunksOf(handle);
}

Status PgTxn::PrefetchFirstEntryOfEntry(InodeId dir, std::string_view name) {
  return PrefetchOfEntry<std::optional<DentryRow>>(
      kFirstEntryOfEntry, dir, name, entry_writes_, 4, FirstEntryOfRows,
      [this](InodeId ino, std::optional<DentryRow> first) {
        prefetched_first_entry_.emplace(ino, std::move(first));
      });
}

Result<std::optional<DentryRow>> PgTxn::GetDentry(InodeId parent, std::string_view name) {
  RETURN_IF_ERROR(Settle());
  if (!failed_.ok()) return failed_;
  for (auto it = prefetched_.begin(); it != prefetched_.end(); ++it) {
    if (it->parent != parent || it->name != name) continue;
    std::optional<DentryRow> entry = std::move(it->entry);
    prefetched_.erase(it);
    return entry;
  }
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetDentry, {Id64(parent), pg::Param::Bytes(name)}));
  if (rows.size() == 0) return std::optional<DentryRow>();
  DentryRow entry = DentryOfRow(rows, 0);
  // Not over a row this transaction wrote (the join read the snapshot's).
  if (!rows.IsNull(0, 4) && !inodes_.count(entry.ino.value())) {
    inodes_[entry.ino.value()] = InodeAt(rows, 0, 4);
  }
  return std::optional<DentryRow>(std::move(entry));
}

Result<std::vector<DirItem>> PgTxn::ListDir(InodeId parent, uint64_t after_seq, size_t limit,
                                            bool with_inodes) {
  std::vector<DirItem> out;
  if (limit == 0) return out;
  if (after_seq == 0 && limit == 1 && !with_inodes) {  // is it empty: prefetched?
    RETURN_IF_ERROR(Settle());
    if (auto first = TakePrefetched(prefetched_first_entry_, parent)) {
      if (*first) out.push_back(DirItem{std::move(**first), std::nullopt});
      return out;
    }
  }
  ASSIGN_OR_RETURN(pg::Rows rows, Run(with_inodes ? kListDirInodes : kListDir,
                                      {Id64(parent), U(after_seq), Limit(limit)}));
  out.reserve(static_cast<size_t>(rows.size()));
  for (int r = 0; r < rows.size(); ++r) {
    DirItem item{DentryOfRow(rows, r), std::nullopt};
    if (with_inodes && !rows.IsNull(r, 4)) item.inode = InodeAt(rows, r, 4);
    out.push_back(std::move(item));
  }
  return out;
}

Status PgTxn::ScanDentries(const RowVisitor<DentryRow>& visit) {
  return ScanPaged<DentryRow>(kScanDentries, {pg::Param(INT64_MIN), pg::Param::Bytes("")},
                              DentryOfRow, DentryKey, visit);
}

Status PgTxn::PutDentry(const DentryRow& row) {
  prefetched_.clear();
  prefetched_first_entry_.reset();
  ++entry_writes_;
  return Exec(kPutDentry,
              {Id64(row.parent), pg::Param::Bytes(row.name), Id64(row.ino), U(row.seq)});
}

Status PgTxn::DeleteDentry(InodeId parent, std::string_view name) {
  prefetched_.clear();
  prefetched_first_entry_.reset();
  ++entry_writes_;
  return Exec(kDeleteDentry, {Id64(parent), pg::Param::Bytes(name)});
}

// ---- xattrs ----

Result<std::optional<std::string>> PgTxn::GetXattr(InodeId ino, std::string_view name) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetXattr, {Id64(ino), pg::Param::Bytes(name)}));
  if (rows.size() == 0) return std::optional<std::string>();
  return std::optional<std::string>(rows.Bytes(0, 0));
}

Result<std::vector<std::string>> PgTxn::ListXattrNames(InodeId ino) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kListXattrNames, {Id64(ino)}));
  std::vector<std::string> names;
  for (int r = 0; r < rows.size(); ++r) names.push_back(rows.Bytes(r, 0));
  return names;
}

Status PgTxn::ScanXattrs(const RowVisitor<XattrRow>& visit) {
  return ScanPaged<XattrRow>(kScanXattrs, {pg::Param(INT64_MIN), pg::Param::Bytes("")}, XattrOfRow,
                             XattrKey, visit);
}

Status PgTxn::PutXattr(InodeId ino, std::string_view name, std::string_view value) {
  RETURN_IF_ERROR(QueueDeleteOf(ino));
  return Exec(kPutXattr, {Id64(ino), pg::Param::Bytes(name), pg::Param::Bytes(value)});
}

Status PgTxn::DeleteXattr(InodeId ino, std::string_view name) {
  RETURN_IF_ERROR(QueueDeleteOf(ino));
  return Exec(kDeleteXattr, {Id64(ino), pg::Param::Bytes(name)});
}

namespace pgrows {

InodeRow InodeAt(const pg::Rows& q, int r, int c) {
  InodeRow row;
  InodeAttr& a = row.attr;
  a.ino = InodeId(q.UInt(r, c));
  a.mode = static_cast<uint32_t>(q.Int(r, c + 1));
  a.uid = static_cast<uint32_t>(q.Int(r, c + 2));
  a.gid = static_cast<uint32_t>(q.Int(r, c + 3));
  a.size = q.UInt(r, c + 4);
  a.nlink = static_cast<uint32_t>(q.Int(r, c + 5));
  a.rdev = static_cast<uint32_t>(q.Int(r, c + 6));
  a.atime = Timespec{q.Int(r, c + 7), static_cast<uint32_t>(q.Int(r, c + 8))};
  a.mtime = Timespec{q.Int(r, c + 9), static_cast<uint32_t>(q.Int(r, c + 10))};
  a.ctime = Timespec{q.Int(r, c + 11), static_cast<uint32_t>(q.Int(r, c + 12))};
  a.chunk_size = q.UInt(r, c + 13);
  a.generation = q.UInt(r, c + 14);
  a.replicas = static_cast<uint32_t>(q.Int(r, c + 15));
  a.placement = static_cast<Placement>(q.Int(r, c + 16));
  a.placement_nodes = NodesOfArray(q.Text(r, c + 17));
  row.target = q.Bytes(r, c + 18);
  row.parent = InodeId(q.UInt(r, c + 19));
  row.entry_seq = q.UInt(r, c + 20);
  a.protect = UnpackProtection(q.UInt(r, c + 21), q.UInt(r, c + 22));
  return row;
}

}  // namespace pgrows

}  // namespace t0fs::meta
