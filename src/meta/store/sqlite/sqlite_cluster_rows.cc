// Row codecs of the SQLite engine: sessions, handles, replay records, nodes,
// volumes, named values, counters and totals.
#include <fmt/format.h>
#include <sys/stat.h>

#include "meta/store/sqlite/sqlite_rows.h"

namespace t0fs::meta::sqlite {
namespace {

SessionRecord SessionFromRow(const Statement& q) {
  return SessionRecord{SessionId(q.U64(0)), q.Bytes(1), q.Bytes(2), Timespec{q.Int(3), q.U32(4)}};
}

HandleRow HandleFromRow(const Statement& q) {
  return HandleRow{HandleId(q.U64(0)), SessionId(q.U64(1)), InodeId(q.U64(2)), q.U32(3)};
}

ReplayRow ReplayFromRow(const Statement& q) {
  return ReplayRow{SessionId(q.U64(0)),    q.U32(1),     q.U64(2),
                   CodeFromWire(q.U32(3)), q.Bytes(4),   InodeId(q.U64(5)),
                   HandleId(q.U64(6)),     q.Int(7) != 0};
}

NodeRow NodeFromRow(const Statement& q) {
  NodeRow n;
  n.node = NodeId(q.U64(0));
  n.host_id = q.Bytes(1);
  n.hostname = q.Bytes(2);
  n.address = q.Bytes(3);
  n.local_socket = q.Bytes(4);
  n.last_heartbeat = Timespec{q.Int(5), q.U32(6)};
  n.admin_state = static_cast<NodeAdminState>(q.U32(7));
  return n;
}

VolumeRecord VolumeFromRow(const Statement& q) {
  return VolumeRecord{VolumeId(q.U64(0)), NodeId(q.U64(1)), q.Bytes(2), q.Bytes(3),
                      q.U64(4),           q.U64(5),         q.U64(6)};
}

template <typename Row, typename Decode>
Result<std::vector<Row>> Collect(StatementLease& q, Decode decode) {
  std::vector<Row> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    out.push_back(decode(*q));
  }
}

template <typename Row, typename Decode>
Result<std::optional<Row>> First(StatementLease& q, Decode decode) {
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (!row) return std::optional<Row>();
  return std::optional<Row>(decode(*q));
}

template <typename Row, typename Decode>
Status Visit(StatementLease& q, const RowVisitor<Row>& visit, Decode decode) {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();
    RETURN_IF_ERROR(visit(decode(*q)));
  }
}

// The AUTOINCREMENT table whose sqlite_sequence row is the counter.
const char* CounterTable(Counter counter) {
  switch (counter) {
    case Counter::kInode:
      return "inodes";
    case Counter::kChunk:
      return "chunks";
    case Counter::kGarbage:
      return "garbage";
    case Counter::kSession:
      return "sessions";
    case Counter::kHandle:
      return "handles";
    case Counter::kNode:
      return "nodes";
    case Counter::kVolume:
      return "volumes";
  }
  return "";
}

constexpr const char* kSessionColumns = "id, client_name, host_id, renewed_s, renewed_ns";
constexpr const char* kHandleColumns = "id, session, ino, flags";
constexpr const char* kReplayColumns = "session, slot, seq, code, message, ino, handle, flag";
constexpr const char* kNodeColumns =
    "id, host_id, hostname, address, local_socket, heartbeat_s, heartbeat_ns, admin_state";
constexpr const char* kVolumeColumns = "id, node, uuid, path, total_bytes, free_bytes, chunks";

}  // namespace

// ---- sessions ----

Result<std::optional<SessionRecord>> GetSession(Db& db, SessionId session) {
  static const std::string sql =
      fmt::format("SELECT {} FROM sessions WHERE id = ?", kSessionColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, session));
  return First<SessionRecord>(q, SessionFromRow);
}

Result<std::vector<SessionRecord>> ListSessions(Db& db) {
  static const std::string sql =
      fmt::format("SELECT {} FROM sessions ORDER BY id", kSessionColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return Collect<SessionRecord>(q, SessionFromRow);
}

Status PutSession(Db& db, const SessionRecord& row) {
  return db.Run(
      "INSERT INTO sessions (id, client_name, host_id, renewed_s, renewed_ns) "
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET client_name = excluded.client_name, "
      "host_id = excluded.host_id, renewed_s = excluded.renewed_s, renewed_ns = "
      "excluded.renewed_ns",
      row.session, row.client_name, row.host_id, row.last_renewed.sec, row.last_renewed.nsec);
}

Status DeleteSession(Db& db, SessionId session) {
  return db.Run("DELETE FROM sessions WHERE id = ?", session);
}

// ---- handles ----

Result<std::optional<HandleRow>> GetHandle(Db& db, HandleId handle) {
  static const std::string sql = fmt::format("SELECT {} FROM handles WHERE id = ?", kHandleColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, handle));
  return First<HandleRow>(q, HandleFromRow);
}

Result<std::vector<HandleRow>> ListHandlesOf(Db& db, InodeId ino) {
  static const std::string sql =
      fmt::format("SELECT {} FROM handles WHERE ino = ? ORDER BY id", kHandleColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, ino));
  return Collect<HandleRow>(q, HandleFromRow);
}

Result<std::vector<HandleRow>> ListHandlesOfSession(Db& db, SessionId session) {
  static const std::string sql =
      fmt::format("SELECT {} FROM handles WHERE session = ? ORDER BY id", kHandleColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, session));
  return Collect<HandleRow>(q, HandleFromRow);
}

Status ScanHandles(Db& db, const RowVisitor<HandleRow>& visit) {
  static const std::string sql = fmt::format("SELECT {} FROM handles ORDER BY id", kHandleColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return Visit(q, visit, HandleFromRow);
}

Status PutHandle(Db& db, const HandleRow& row) {
  return db.Run(
      "INSERT INTO handles (id, session, ino, flags) VALUES (?, ?, ?, ?) ON CONFLICT (id) "
      "DO UPDATE SET session = excluded.session, ino = excluded.ino, flags = excluded.flags",
      row.id, row.session, row.ino, row.flags);
}

Status DeleteHandle(Db& db, HandleId handle) {
  return db.Run("DELETE FROM handles WHERE id = ?", handle);
}

// ---- replay records ----

Result<std::optional<ReplayRow>> GetReplay(Db& db, SessionId session, uint32_t slot) {
  static const std::string sql =
      fmt::format("SELECT {} FROM replay WHERE session = ? AND slot = ?", kReplayColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, session, slot));
  return First<ReplayRow>(q, ReplayFromRow);
}

Status ScanReplays(Db& db, const RowVisitor<ReplayRow>& visit) {
  static const std::string sql =
      fmt::format("SELECT {} FROM replay ORDER BY session, slot", kReplayColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return Visit(q, visit, ReplayFromRow);
}

Status PutReplay(Db& db, const ReplayRow& row) {
  return db.Run(
      "INSERT INTO replay (session, slot, seq, code, message, ino, handle, flag) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session, slot) DO UPDATE SET "
      "seq = excluded.seq, code = excluded.code, message = excluded.message, "
      "ino = excluded.ino, handle = excluded.handle, flag = excluded.flag",
      row.session, row.slot, row.seq, static_cast<uint32_t>(row.code), row.message, row.ino,
      row.handle, row.flag);
}

Status DeleteReplaysOf(Db& db, SessionId session) {
  return db.Run("DELETE FROM replay WHERE session = ?", session);
}

// ---- nodes and volumes ----

Result<std::optional<NodeRow>> GetNode(Db& db, NodeId node) {
  static const std::string sql = fmt::format("SELECT {} FROM nodes WHERE id = ?", kNodeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, node));
  return First<NodeRow>(q, NodeFromRow);
}

Result<std::vector<NodeRow>> ListNodes(Db& db) {
  static const std::string sql = fmt::format("SELECT {} FROM nodes ORDER BY id", kNodeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return Collect<NodeRow>(q, NodeFromRow);
}

Status PutNode(Db& db, const NodeRow& row) {
  return db.Run(
      "INSERT INTO nodes (id, host_id, hostname, address, local_socket, heartbeat_s, "
      "heartbeat_ns, admin_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
      "host_id = excluded.host_id, hostname = excluded.hostname, address = excluded.address, "
      "local_socket = excluded.local_socket, heartbeat_s = excluded.heartbeat_s, "
      "heartbeat_ns = excluded.heartbeat_ns, admin_state = excluded.admin_state",
      row.node, row.host_id, row.hostname, row.address, row.local_socket, row.last_heartbeat.sec,
      row.last_heartbeat.nsec, static_cast<uint32_t>(row.admin_state));
}

Result<std::optional<VolumeRecord>> GetVolume(Db& db, VolumeId volume) {
  static const std::string sql = fmt::format("SELECT {} FROM volumes WHERE id = ?", kVolumeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, volume));
  return First<VolumeRecord>(q, VolumeFromRow);
}

Result<std::vector<VolumeRecord>> ListVolumes(Db& db) {
  static const std::string sql = fmt::format("SELECT {} FROM volumes ORDER BY id", kVolumeColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  return Collect<VolumeRecord>(q, VolumeFromRow);
}

Status PutVolume(Db& db, const VolumeRecord& row) {
  return db.Run(
      "INSERT INTO volumes (id, node, uuid, path, total_bytes, free_bytes, chunks) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET node = excluded.node, "
      "uuid = excluded.uuid, path = excluded.path, total_bytes = excluded.total_bytes, "
      "free_bytes = excluded.free_bytes, chunks = excluded.chunks",
      row.volume, row.node, row.uuid, row.path, row.total_bytes, row.free_bytes, row.chunks);
}

// ---- named values, counters, totals ----

Result<std::optional<std::string>> GetProperty(Db& db, std::string_view key) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT value FROM meta WHERE key = ?", key));
  return First<std::string>(q, [](const Statement& s) { return s.Bytes(0); });
}

Status PutProperty(Db& db, std::string_view key, std::string_view value) {
  return db.Run(
      "INSERT INTO meta (key, value) VALUES (?, ?) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key, value);
}

Result<uint64_t> NextId(Db& db, Counter counter) {
  const char* table = CounterTable(counter);
  {
    ASSIGN_OR_RETURN(auto q, db.Query("UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = ? "
                                      "RETURNING seq",
                                      table));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (row) {
      uint64_t id = q->U64(0);
      RETURN_IF_ERROR(q->Run());
      return id;
    }
  }
  // The table never had a row: its sequence starts now.
  RETURN_IF_ERROR(db.Run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, 1)", table));
  return uint64_t{1};
}

Status ReserveId(Db& db, Counter counter, uint64_t id) {
  const char* table = CounterTable(counter);
  ASSIGN_OR_RETURN(auto q, db.Query("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ? "
                                    "RETURNING seq",
                                    id, table));
  ASSIGN_OR_RETURN(bool row, q->Step());
  if (row) return q->Run();
  return db.Run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", table, id);
}

Result<RowTotals> Totals(Db& db) {
  RowTotals t;
  auto count = [&](std::string_view sql, uint64_t* field) -> Status {
    ASSIGN_OR_RETURN(auto v, db.QueryInt(sql));
    *field = static_cast<uint64_t>(v.value_or(0));
    return Status::Ok();
  };
  // Type bits in SQL: S_IFMT 0170000 = 61440, S_IFDIR 0040000 = 16384,
  // S_IFREG 0100000 = 32768.
  static_assert(S_IFMT == 61440 && S_IFDIR == 16384 && S_IFREG == 32768);
  RETURN_IF_ERROR(count("SELECT COUNT(*) FROM inodes WHERE (mode & 61440) <> 16384", &t.files));
  RETURN_IF_ERROR(
      count("SELECT COUNT(*) FROM inodes WHERE (mode & 61440) = 16384", &t.directories));
  RETURN_IF_ERROR(count("SELECT COALESCE(SUM(size), 0) FROM inodes WHERE (mode & 61440) = 32768",
                        &t.logical_bytes));
  RETURN_IF_ERROR(count("SELECT COUNT(*) FROM chunks", &t.chunks));
  RETURN_IF_ERROR(count("SELECT COUNT(*) FROM sessions", &t.sessions));
  RETURN_IF_ERROR(count("SELECT COUNT(*) FROM handles", &t.handles));
  RETURN_IF_ERROR(count("SELECT COUNT(*) FROM garbage", &t.garbage));
  return t;
}

std::string FormatNodeList(const std::vector<NodeId>& nodes) {
  std::string out;
  for (NodeId n : nodes) out += (out.empty() ? "" : ",") + std::to_string(n.value());
  return out;
}

std::vector<NodeId> ParseNodeList(std::string_view text) {
  std::vector<NodeId> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    uint64_t v = 0;
    for (char ch : text.substr(pos, end - pos)) {
      if (ch >= '0' && ch <= '9') v = v * 10 + static_cast<uint64_t>(ch - '0');
    }
    if (v != 0) out.push_back(NodeId(v));
    pos = end + 1;
  }
  return out;
}

}  // namespace t0fs::meta::sqlite
