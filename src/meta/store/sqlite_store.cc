#include "meta/store/sqlite_store.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/logging.h"
#include "common/secret.h"
#include "meta/store/sqlite/sqlite_schema.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

using sqlite::Db;
using sqlite::Transaction;

// A random (version 4) UUID in its text form.
std::string NewUuid() {
  std::string bytes = RandomBytes(16);
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);
  std::string hex = HexEncode(bytes);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20));
}

// Inserts the root directory and the cluster id of a new store (in the
// transaction that created its schema). Returns the cluster id.
Result<std::string> CreateStore(Db& db, const std::string& path) {
  Timespec now = WallNow();
  RETURN_IF_ERROR(db.Run(
      "INSERT INTO inodes (ino, mode, uid, gid, size, nlink, rdev, atime_s, atime_ns, mtime_s, "
      "mtime_ns, ctime_s, ctime_ns, chunk_size, generation, target, parent) "
      "VALUES (?, ?, 0, 0, 0, 2, 0, ?, ?, ?, ?, ?, ?, 0, 1, NULL, ?)",
      kRootInode, uint32_t{S_IFDIR | 0755}, now.sec, now.nsec, now.sec, now.nsec, now.sec,
      now.nsec, kRootInode));
  std::string cluster_id = NewUuid();
  RETURN_IF_ERROR(db.Run("INSERT INTO meta (key, value) VALUES ('cluster_id', ?)", cluster_id));
  RETURN_IF_ERROR(db.Run("INSERT INTO meta (key, value) VALUES ('created', ?)",
                         fmt::format("{}.{:09}", now.sec, now.nsec)));
  if (path == ":memory:") {
    LOG_DEBUG("created in-memory metadata store (cluster {})", cluster_id);
  } else {
    LOG_INFO("created metadata store {} (cluster {})", path, cluster_id);
  }
  return cluster_id;
}

// Creates the store when the database is new (schema, root, cluster id in
// one transaction: a crash during creation leaves an empty database, created
// again at the next open), migrates an older schema; returns the cluster id.
Result<std::string> OpenSchema(Db& db, const std::string& path) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Mode::kImmediate));
  ASSIGN_OR_RETURN(bool created, sqlite::PrepareSchema(db, path));
  std::string cluster_id;
  if (created) {
    ASSIGN_OR_RETURN(cluster_id, CreateStore(db, path));
  } else {
    ASSIGN_OR_RETURN(auto q, db.Query("SELECT value FROM meta WHERE key = 'cluster_id'"));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) {
      return Status(StatusCode::kMetaSchema,
                    fmt::format("{}: metadata database has no cluster id", path));
    }
    cluster_id = q->Bytes(0);
  }
  RETURN_IF_ERROR(txn.Commit());
  return cluster_id;
}

}  // namespace

namespace internal {

InodeAttr AttrFromRow(const sqlite::Statement& row, int c) {
  InodeAttr a;
  a.ino = InodeId(row.U64(c));
  a.mode = row.U32(c + 1);
  a.uid = row.U32(c + 2);
  a.gid = row.U32(c + 3);
  a.size = row.U64(c + 4);
  a.nlink = row.U32(c + 5);
  a.rdev = row.U32(c + 6);
  a.atime = Timespec{row.Int(c + 7), row.U32(c + 8)};
  a.mtime = Timespec{row.Int(c + 9), row.U32(c + 10)};
  a.ctime = Timespec{row.Int(c + 11), row.U32(c + 12)};
  a.chunk_size = row.U64(c + 13);
  a.generation = row.U64(c + 14);
  a.replicas = row.U32(c + 15);
  a.placement = static_cast<Placement>(row.U32(c + 16));
  a.placement_nodes = ParseNodeList(row.Bytes(c + 17));
  return a;
}

Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return Status(StatusCode::kInvalidArgument, fmt::format("invalid name '{}'", name));
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "name contains '/' or NUL");
  }
  if (name.size() > kMaxNameLength) {
    return Status(StatusCode::kNameTooLong,
                  fmt::format("name of {} bytes (limit {})", name.size(), kMaxNameLength));
  }
  return Status::Ok();
}

}  // namespace internal

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       const SqliteStoreOptions& opts) {
  if (opts.sync != "normal" && opts.sync != "full") {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("meta store sync must be 'normal' or 'full', not '{}'", opts.sync));
  }
  ASSIGN_OR_RETURN(Db db, Db::Open(path, opts.busy_timeout.value));
  {
    ASSIGN_OR_RETURN(auto q, db.Query("PRAGMA journal_mode = WAL"));
    ASSIGN_OR_RETURN(bool row, q->Step());
    std::string mode = row ? q->Bytes(0) : "";
    if (mode != "wal" && path != ":memory:") {
      LOG_WARN("metadata store {}: journal mode is '{}', not WAL", path, mode);
    }
  }
  RETURN_IF_ERROR(db.Exec(
      fmt::format("PRAGMA synchronous = {}; PRAGMA cache_size = -{}; PRAGMA foreign_keys = OFF; "
                  "PRAGMA temp_store = MEMORY;",
                  opts.sync == "full" ? "FULL" : "NORMAL",
                  std::max<uint64_t>(opts.cache_size.bytes / 1024, 64))));
  ASSIGN_OR_RETURN(std::string cluster_id, OpenSchema(db, path));
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db), opts, std::move(cluster_id)));
}

SqliteStore::SqliteStore(sqlite::Db db, SqliteStoreOptions opts, std::string cluster_id)
    : db_(std::move(db)), opts_(std::move(opts)), cluster_id_(std::move(cluster_id)) {}

SqliteStore::~SqliteStore() {
  std::lock_guard lock(mu_);
  Status st = db_.Close();
  if (!st.ok()) LOG_WARN("closing metadata store: {}", st.ToString());
}

Status SqliteStore::Mutate(const OpToken& token, const Body& body, const Replay& replay,
                           bool durable) {
  std::lock_guard lock(mu_);
  // synchronous cannot change inside a transaction: set it around this one.
  bool raise_sync = durable && opts_.sync != "full";
  if (raise_sync) RETURN_IF_ERROR(db_.Exec("PRAGMA synchronous = FULL"));
  Status st = MutateLocked(token, body, replay);
  if (raise_sync) {
    Status restore = db_.Exec("PRAGMA synchronous = NORMAL");
    if (!restore.ok()) LOG_WARN("metadata store: restoring synchronous: {}", restore.ToString());
  }
  return st;
}

Status SqliteStore::MutateLocked(const OpToken& token, const Body& body, const Replay& replay) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_, Transaction::Mode::kImmediate));
  const bool record = token.session.valid();
  Outcome out;
  if (record) {
    bool replayed = false;
    Status recorded;
    {
      ASSIGN_OR_RETURN(auto q, db_.Query("SELECT seq, code, message, ino, handle, flag FROM replay "
                                         "WHERE session = ? AND slot = ?",
                                         token.session, token.slot));
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (row && q->U64(0) == token.seq) {
        replayed = true;
        auto code = CodeFromWire(q->U32(1));
        recorded = code == StatusCode::kOk ? Status::Ok() : Status(code, q->Bytes(2));
        out.ino = InodeId(q->U64(3));
        out.handle = HandleId(q->U64(4));
        out.flag = q->Int(5) != 0;
      } else if (!row) {
        RETURN_IF_ERROR(RequireSession(token.session));
      }
    }
    if (replayed) {
      if (recorded.ok() && replay) recorded = replay(out);
      return recorded;  // nothing written: `txn` rolls back
    }
  }
  RETURN_IF_ERROR(db_.Run("SAVEPOINT op"));
  Status st = body(out);
  if (internal::IsDatabaseError(st)) return st;  // `txn` rolls back everything
  if (!st.ok()) RETURN_IF_ERROR(db_.Run("ROLLBACK TO op"));
  RETURN_IF_ERROR(db_.Run("RELEASE op"));
  if (record) {
    RETURN_IF_ERROR(
        db_.Run("INSERT INTO replay (session, slot, seq, code, message, ino, handle, flag) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session, slot) DO UPDATE SET "
                "seq = excluded.seq, code = excluded.code, message = excluded.message, "
                "ino = excluded.ino, handle = excluded.handle, flag = excluded.flag",
                token.session, token.slot, token.seq, static_cast<uint32_t>(st.code()),
                st.message(), out.ino, out.handle, out.flag));
  }
  RETURN_IF_ERROR(txn.Commit());
  return st;
}

Status SqliteStore::Read(const std::function<Status()>& body) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_, Transaction::Mode::kDeferred));
  RETURN_IF_ERROR(body());
  return txn.Commit();
}

}  // namespace t0fs::meta
