// PgTxn: sessions, handles, replay records, nodes, volumes, named values and
// totals.
#include <sys/stat.h>

#include <algorithm>

#include "meta/store/pg/pg_txn.h"

namespace t0fs::meta {

using pgrows::Id64;
using pgrows::Stmt;
using pgrows::U;

namespace {

#define T0FS_PG_SESSION_COLUMNS "id, client_name, host_id, renewed_s, renewed_ns"
#define T0FS_PG_HANDLE_COLUMNS "id, session, ino, flags"
#define T0FS_PG_REPLAY_COLUMNS "session, slot, seq, code, message, ino, handle, flag"
#define T0FS_PG_NODE_COLUMNS \
  "id, host_id, hostname, address, local_socket, heartbeat_s, heartbeat_ns, admin_state"
#define T0FS_PG_VOLUME_COLUMNS "id, node, uuid, path, total_bytes, free_bytes, chunks"

constexpr Stmt kGetSession{"get_session",
                           "SELECT " T0FS_PG_SESSION_COLUMNS " FROM sessions WHERE id = $1"};
constexpr Stmt kListSessions{"list_sessions",
                             "SELECT " T0FS_PG_SESSION_COLUMNS " FROM sessions ORDER BY id"};
constexpr Stmt kPutSession{"put_session",
                           "INSERT INTO sessions (" T0FS_PG_SESSION_COLUMNS
                           ") VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET "
                           "client_name = excluded.client_name, host_id = excluded.host_id, "
                           "renewed_s = excluded.renewed_s, renewed_ns = excluded.renewed_ns"};
constexpr Stmt kDeleteSession{"delete_session", "DELETE FROM sessions WHERE id = $1"};

constexpr Stmt kGetHandle{"get_handle",
                          "SELECT " T0FS_PG_HANDLE_COLUMNS " FROM handles WHERE id = $1"};
constexpr Stmt kHandlesOf{
    "handles_of", "SELECT " T0FS_PG_HANDLE_COLUMNS " FROM handles WHERE ino = $1 ORDER BY id"};
// The handles of the inode entry ($1, $2) names, that inode last: no row
// when there is no such entry, one with NULL handle columns when it has none.
constexpr Stmt kHandlesOfEntry{
    "handles_of_entry",
    "SELECT h.id, h.session, h.ino, h.flags, e.ino FROM dentries e" T0FS_PG_LOOKUP_JOIN(
        "handles", "ino = e.ino", "h") "WHERE e.parent = $1 AND e.name = $2 ORDER BY h.id"};
// The handles of the inode handle $1 is of (it among them), each with that
// inode: no row when there is no such handle.
constexpr Stmt kHandlesOfHandle{
    "handles_of_handle",
    "SELECT o.id, o.session, o.ino, o.flags, " T0FS_PG_INODE_COLUMNS_OF(
        "i.") " FROM handles h" T0FS_PG_LOOKUP_JOIN("inodes", "ino = h.ino", "i")
        T0FS_PG_LOOKUP_JOIN("handles", "ino = h.ino", "o") "WHERE h.id = $1 ORDER BY o.id"};
constexpr Stmt kHandlesOfSession{"handles_of_session",
                                 "SELECT " T0FS_PG_HANDLE_COLUMNS
                                 " FROM handles WHERE session = $1 ORDER BY id"};
constexpr Stmt kScanHandles{"scan_handles", "SELECT " T0FS_PG_HANDLE_COLUMNS
                                            " FROM handles WHERE id > $1 ORDER BY id LIMIT $2"};
constexpr Stmt kPutHandle{"put_handle",
                          "INSERT INTO handles (" T0FS_PG_HANDLE_COLUMNS
                          ") VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET "
                          "session = excluded.session, ino = excluded.ino, flags = excluded.flags"};
constexpr Stmt kDeleteHandle{"delete_handle", "DELETE FROM handles WHERE id = $1"};

constexpr Stmt kGetReplay{
    "get_replay", "SELECT " T0FS_PG_REPLAY_COLUMNS " FROM replay WHERE session = $1 AND slot = $2"};
constexpr Stmt kScanReplays{"scan_replays", "SELECT " T0FS_PG_REPLAY_COLUMNS
                                            " FROM replay WHERE (session, slot) > ($1, $2) "
                                            "ORDER BY session, slot LIMIT $3"};
constexpr Stmt kPutReplay{
    "put_replay",
    "INSERT INTO replay (" T0FS_PG_REPLAY_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (session, slot) DO UPDATE SET "
    "seq = excluded.seq, code = excluded.code, message = excluded.message, "
    "ino = excluded.ino, handle = excluded.handle, flag = excluded.flag"};
constexpr Stmt kDeleteReplaysOf{"delete_replays_of", "DELETE FROM replay WHERE session = $1"};

constexpr Stmt kGetNode{"get_node", "SELECT " T0FS_PG_NODE_COLUMNS " FROM nodes WHERE id = $1"};
constexpr Stmt kListNodes{"list_nodes", "SELECT " T0FS_PG_NODE_COLUMNS " FROM nodes ORDER BY id"};
constexpr Stmt kPutNode{
    "put_node",
    "INSERT INTO nodes (" T0FS_PG_NODE_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO UPDATE SET "
    "host_id = excluded.host_id, hostname = excluded.hostname, address = excluded.address, "
    "local_socket = excluded.local_socket, heartbeat_s = excluded.heartbeat_s, "
    "heartbeat_ns = excluded.heartbeat_ns, admin_state = excluded.admin_state"};

constexpr Stmt kGetVolume{"get_volume",
                          "SELECT " T0FS_PG_VOLUME_COLUMNS " FROM volumes WHERE id = $1"};
constexpr Stmt kListVolumes{"list_volumes",
                            "SELECT " T0FS_PG_VOLUME_COLUMNS " FROM volumes ORDER BY id"};
constexpr Stmt kPutVolume{"put_volume",
                          "INSERT INTO volumes (" T0FS_PG_VOLUME_COLUMNS
                          ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET "
                          "node = excluded.node, uuid = excluded.uuid, path = excluded.path, "
                          "total_bytes = excluded.total_bytes, free_bytes = excluded.free_bytes, "
                          "chunks = excluded.chunks"};

constexpr Stmt kGetProperty{"get_property", "SELECT value FROM properties WHERE key = $1"};
constexpr Stmt kPutProperty{"put_property",
                            "INSERT INTO properties (key, value) VALUES ($1, $2) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"};

// Type bits: S_IFMT 0170000 = 61440, S_IFDIR 0040000 = 16384, S_IFREG
// 0100000 = 32768. One statement, one round trip, one snapshot.
constexpr Stmt kTotals{"totals",
                       "SELECT (SELECT count(*) FROM inodes WHERE (mode & 61440) = 16384), "
                       "(SELECT count(*) FROM inodes WHERE (mode & 61440) <> 16384), "
                       "(SELECT COALESCE(sum(size), 0) FROM inodes WHERE (mode & 61440) = 32768), "
                       "(SELECT count(*) FROM chunks), (SELECT count(*) FROM sessions), "
                       "(SELECT count(*) FROM handles), (SELECT count(*) FROM garbage)"};
static_assert(S_IFMT == 61440 && S_IFDIR == 16384 && S_IFREG == 32768);

SessionRecord SessionOfRow(const pg::Rows& q, int r) {
  return SessionRecord{SessionId(q.UInt(r, 0)), q.Bytes(r, 1), q.Bytes(r, 2),
                       Timespec{q.Int(r, 3), static_cast<uint32_t>(q.Int(r, 4))}};
}

HandleRow HandleOfRow(const pg::Rows& q, int r) {
  return HandleRow{HandleId(q.UInt(r, 0)), SessionId(q.UInt(r, 1)), InodeId(q.UInt(r, 2)),
                   static_cast<uint32_t>(q.Int(r, 3))};
}

// kHandlesOfEntry's rows (one with NULL handle columns: no handle).
std::vector<HandleRow> HandlesOfEntryRows(const pg::Rows& q) {
  std::vector<HandleRow> out;
  for (int r = 0; r < q.size(); ++r) {
    if (!q.IsNull(r, 0)) out.push_back(HandleOfRow(q, r));
  }
  return out;
}
std::vector<pg::Param> HandleKey(const HandleRow& row) {
  return {Id64(row.id)};
}

ReplayRow ReplayOfRow(const pg::Rows& q, int r) {
  return ReplayRow{SessionId(q.UInt(r, 0)),
                   static_cast<uint32_t>(q.Int(r, 1)),
                   q.UInt(r, 2),
                   CodeFromWire(static_cast<uint32_t>(q.Int(r, 3))),
                   q.Bytes(r, 4),
                   InodeId(q.UInt(r, 5)),
                   HandleId(q.UInt(r, 6)),
                   q.Bool(r, 7)};
}
std::vector<pg::Param> ReplayKey(const ReplayRow& row) {
  return {Id64(row.session), U(row.slot)};
}

NodeRow NodeOfRow(const pg::Rows& q, int r) {
  NodeRow n;
  n.node = NodeId(q.UInt(r, 0));
  n.host_id = q.Bytes(r, 1);
  n.hostname = q.Bytes(r, 2);
  n.address = q.Bytes(r, 3);
  n.local_socket = q.Bytes(r, 4);
  n.last_heartbeat = Timespec{q.Int(r, 5), static_cast<uint32_t>(q.Int(r, 6))};
  n.admin_state = static_cast<NodeAdminState>(q.Int(r, 7));
  return n;
}

VolumeRecord VolumeOfRow(const pg::Rows& q, int r) {
  return VolumeRecord{VolumeId(q.UInt(r, 0)), NodeId(q.UInt(r, 1)), q.Bytes(r, 2), q.Bytes(r, 3),
                      q.UInt(r, 4),           q.UInt(r, 5),         q.UInt(r, 6)};
}

template <typename Row>
std::vector<Row> AllOfRows(const pg::Rows& q, Row (*decode)(const pg::Rows&, int)) {
  std::vector<Row> out;
  out.reserve(static_cast<size_t>(q.size()));
  for (int r = 0; r < q.size(); ++r) out.push_back(decode(q, r));
  return out;
}

template <typename Row>
std::optional<Row> FirstOfRows(const pg::Rows& q, Row (*decode)(const pg::Rows&, int)) {
  if (q.size() == 0) return std::nullopt;
  return decode(q, 0);
}

}  // namespace

// ---- sessions ----

Result<std::optional<SessionRecord>> PgTxn::GetSession(SessionId session) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetSession, {Id64(session)}));
  return FirstOfRows(rows, SessionOfRow);
}

Result<std::vector<SessionRecord>> PgTxn::ListSessions() {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kListSessions, {}));
  return AllOfRows(rows, SessionOfRow);
}

Status PgTxn::PutSession(const SessionRecord& row) {
  return Exec(kPutSession,
              {Id64(row.session), pg::Param::Bytes(row.client_name), pg::Param::Bytes(row.host_id),
               pg::Param(row.last_renewed.sec), U(row.last_renewed.nsec)});
}

Status PgTxn::DeleteSession(SessionId session) {
  return Exec(kDeleteSession, {Id64(session)});
}

// ---- handles ----

Result<std::optional<HandleRow>> PgTxn::GetHandle(HandleId handle) {
  RETURN_IF_ERROR(Settle());
  if (!failed_.ok()) return failed_;
  if (auto known = known_handles_.find(handle.value()); known != known_handles_.end()) {
    return known->second;
  }
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetHandle, {Id64(handle)}));
  return FirstOfRows(rows, HandleOfRow);
}

Status PgTxn::PrefetchHandlesOfEntry(InodeId dir, std::string_view name) {
  return PrefetchOfEntry<std::vector<HandleRow>>(
      kHandlesOfEntry, dir, name, handle_writes_, 4, HandlesOfEntryRows,
      [this](InodeId ino, std::vector<HandleRow> handles) {
        known_handle_lists_.emplace(ino.value(), std::move(handles));
      });
}

Status PgTxn::PrefetchHandleAndInode(HandleId handle) {
  const uint64_t writes = handle_writes_;
  return Prefetch(kHandlesOfHandle, {Id64(handle)}, [this, handle, writes](const pg::Rows& rows) {
    // The inode's row unless this transaction has one (read or written).
    if (rows.size() > 0 && !rows.IsNull(0, 4)) {
      const InodeRow inode = pgrows::InodeAt(rows, 0, 4);
      inodes_.emplace(inode.attr.ino.value(), inode);
    }
    if (handle_writes_ != writes) return;  // a handle written since: ask again
    std::optional<HandleRow> found;
    std::vector<HandleRow> handles = AllOfRows(rows, HandleOfRow);
    for (const HandleRow& h : handles) {
      if (h.id == handle) found = h;
    }
    known_handles_.emplace(handle.value(), found);
    if (found) known_handle_lists_.emplace(found->ino.value(), std::move(handles));
  });
}

void PgTxn::HandleWritten(HandleId handle, const HandleRow* row) {
  ++handle_writes_;
  for (auto& [ino, handles] : known_handle_lists_) {
    std::erase_if(handles, [handle](const HandleRow& h) { return h.id == handle; });
  }
  if (row != nullptr) {
    if (auto known = known_handle_lists_.find(row->ino.value());
        known != known_handle_lists_.end()) {
      auto& handles = known->second;
      handles.insert(std::upper_bound(handles.begin(), handles.end(), *row,
                                      [](const HandleRow& a, const HandleRow& b) {
                                        return a.id.value() < b.id.value();
                                      }),
                     *row);
    }
  }
  known_handles_[handle.value()] = row != nullptr ? std::optional<HandleRow>(*row) : std::nullopt;
}

Result<std::vector<HandleRow>> PgTxn::ListHandlesOf(InodeId ino) {
  RETURN_IF_ERROR(Settle());
  if (!failed_.ok()) return failed_;
  if (auto known = known_handle_lists_.find(ino.value()); known != known_handle_lists_.end()) {
    return known->second;
  }
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kHandlesOf, {Id64(ino)}));
  return AllOfRows(rows, HandleOfRow);
}

Result<std::vector<HandleRow>> PgTxn::ListHandlesOfSession(SessionId session) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kHandlesOfSession, {Id64(session)}));
  return AllOfRows(rows, HandleOfRow);
}

Status PgTxn::ScanHandles(const RowVisitor<HandleRow>& visit) {
  return ScanPaged<HandleRow>(kScanHandles, {pg::Param(INT64_MIN)}, HandleOfRow, HandleKey, visit);
}

Status PgTxn::PutHandle(const HandleRow& row) {
  HandleWritten(row.id, &row);
  return Exec(kPutHandle, {Id64(row.id), Id64(row.session), Id64(row.ino), U(row.flags)});
}

Status PgTxn::DeleteHandle(HandleId handle) {
  HandleWritten(handle, nullptr);
  return Exec(kDeleteHandle, {Id64(handle)});
}

// ---- replay records ----

Result<std::optional<ReplayRow>> PgTxn::GetReplay(SessionId session, uint32_t slot) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetReplay, {Id64(session), U(slot)}));
  return FirstOfRows(rows, ReplayOfRow);
}

Status PgTxn::ScanReplays(const RowVisitor<ReplayRow>& visit) {
  return ScanPaged<ReplayRow>(kScanReplays, {pg::Param(INT64_MIN), pg::Param(INT64_MIN)},
                              ReplayOfRow, ReplayKey, visit);
}

Status PgTxn::PutReplay(const ReplayRow& row) {
  return Exec(kPutReplay, {Id64(row.session), U(row.slot), U(row.seq),
                           U(static_cast<uint32_t>(row.code)), pg::Param::Bytes(row.message),
                           Id64(row.ino), Id64(row.handle), pg::Param(row.flag)});
}

Status PgTxn::DeleteReplaysOf(SessionId session) {
  return Exec(kDeleteReplaysOf, {Id64(session)});
}

// ---- nodes and volumes ----

Result<std::optional<NodeRow>> PgTxn::GetNode(NodeId node) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetNode, {Id64(node)}));
  return FirstOfRows(rows, NodeOfRow);
}

Result<std::vector<NodeRow>> PgTxn::ListNodes() {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kListNodes, {}));
  return AllOfRows(rows, NodeOfRow);
}

Status PgTxn::PutNode(const NodeRow& row) {
  return Exec(kPutNode, {Id64(row.node), pg::Param::Bytes(row.host_id),
                         pg::Param::Bytes(row.hostname), pg::Param::Bytes(row.address),
                         pg::Param::Bytes(row.local_socket), pg::Param(row.last_heartbeat.sec),
                         U(row.last_heartbeat.nsec), U(static_cast<uint32_t>(row.admin_state))});
}

Status PgTxn::PrefetchVolume(VolumeId volume) {
  if (!failed_.ok()) return failed_;
  if (volumes_.count(volume.value())) return Status::Ok();
  const uint64_t writes = volume_writes_;
  return Prefetch(kGetVolume, {Id64(volume)}, [this, volume, writes](const pg::Rows& rows) {
    if (volume_writes_ == writes) volumes_.emplace(volume.value(), FirstOfRows(rows, VolumeOfRow));
  });
}

Result<std::optional<VolumeRecord>> PgTxn::GetVolume(VolumeId volume) {
  RETURN_IF_ERROR(Settle());
  if (auto known = volumes_.find(volume.value()); known != volumes_.end()) return known->second;
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetVolume, {Id64(volume)}));
  return FirstOfRows(rows, VolumeOfRow);
}

Result<std::vector<VolumeRecord>> PgTxn::ListVolumes() {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kListVolumes, {}));
  return AllOfRows(rows, VolumeOfRow);
}

Status PgTxn::PutVolume(const VolumeRecord& row) {
  volumes_.clear();
  ++volume_writes_;
  return Exec(kPutVolume,
              {Id64(row.volume), Id64(row.node), pg::Param::Bytes(row.uuid),
               pg::Param::Bytes(row.path), U(row.total_bytes), U(row.free_bytes), U(row.chunks)});
}

// ---- named values, totals ----

Result<std::optional<std::string>> PgTxn::GetProperty(std::string_view key) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetProperty, {pg::Param::Bytes(key)}));
  if (rows.size() == 0) return std::optional<std::string>();
  return std::optional<std::string>(rows.Bytes(0, 0));
}

Status PgTxn::PutProperty(std::string_view key, std::string_view value) {
  return Exec(kPutProperty, {pg::Param::Bytes(key), pg::Param::Bytes(value)});
}

Result<RowTotals> PgTxn::Totals() {
  RETURN_IF_ERROR(AllowSeqScan(true));
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kTotals, {}));
  RETURN_IF_ERROR(AllowSeqScan(false));
  RowTotals t;
  t.directories = rows.UInt(0, 0);
  t.files = rows.UInt(0, 1);
  t.logical_bytes = rows.UInt(0, 2);
  t.chunks = rows.UInt(0, 3);
  t.sessions = rows.UInt(0, 4);
  t.handles = rows.UInt(0, 5);
  t.garbage = rows.UInt(0, 6);
  return t;
}

}  // namespace t0fs::meta
