#include "meta/store/sqlite/sqlite_engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "meta/store/sqlite/sqlite_schema.h"
#include "meta/store/sqlite/sqlite_txn.h"

namespace t0fs::meta {
namespace {

using sqlite::Db;
using sqlite::Transaction;

// Creates the schema of a new database, migrates an older one, refuses what
// is not a t0fs store or is newer than this build. One transaction: a crash
// during creation leaves an empty database, created again at the next open.
Status OpenSchema(Db& db, const std::string& path) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Mode::kImmediate));
  RETURN_IF_ERROR(sqlite::PrepareSchema(db, path).status());
  return txn.Commit();
}

}  // namespace

Result<std::unique_ptr<SqliteEngine>> SqliteEngine::Open(const std::string& path,
                                                         const SqliteOptions& opts) {
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
  RETURN_IF_ERROR(OpenSchema(db, path));
  return std::unique_ptr<SqliteEngine>(new SqliteEngine(std::move(db), opts));
}

SqliteEngine::SqliteEngine(sqlite::Db db, SqliteOptions opts)
    : db_(std::move(db)), opts_(std::move(opts)) {}

SqliteEngine::~SqliteEngine() {
  std::lock_guard lock(mu_);
  Status st = db_.Close();
  if (!st.ok()) LOG_WARN("closing metadata database: {}", st.ToString());
}

Result<std::unique_ptr<ReadTxn>> SqliteEngine::BeginRead() {
  std::unique_lock lock(mu_);
  ASSIGN_OR_RETURN(auto txn, Transaction::Begin(db_, Transaction::Mode::kDeferred));
  return std::unique_ptr<ReadTxn>(new SqliteTxn(*this, std::move(lock), std::move(txn), false));
}

Result<std::unique_ptr<WriteTxn>> SqliteEngine::BeginWrite(const WriteOptions& options) {
  std::unique_lock lock(mu_);
  // synchronous cannot change inside a transaction: set it around this one.
  const bool raise_sync = options.durable && opts_.sync != "full";
  if (raise_sync) RETURN_IF_ERROR(db_.Exec("PRAGMA synchronous = FULL"));
  auto txn = Transaction::Begin(db_, Transaction::Mode::kImmediate);
  if (!txn.ok()) {
    if (raise_sync) (void)db_.Exec("PRAGMA synchronous = NORMAL");
    return txn.status();
  }
  return std::unique_ptr<WriteTxn>(
      new SqliteTxn(*this, std::move(lock), std::move(txn).value(), raise_sync));
}

void SqliteEngine::RecordWrite(uint64_t rows) {
  uint64_t seen = largest_write_.load(std::memory_order_relaxed);
  while (rows > seen && !largest_write_.compare_exchange_weak(seen, rows)) {
  }
}

}  // namespace t0fs::meta
