#include "meta/store/sqlite/sqlite_engine.h"

#include <fmt/format.h>
#include <sqlite3.h>

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
  if (opts.checkpoint != "background" && opts.checkpoint != "inline") {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("meta store checkpoint must be 'background' or 'inline', not '{}'",
                              opts.checkpoint));
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
  std::optional<Db> ckpt;
  if (opts.checkpoint == "background" && path != ":memory:") {
    ASSIGN_OR_RETURN(ckpt, Db::Open(path, opts.busy_timeout.value));
    RETURN_IF_ERROR(ckpt->Exec("PRAGMA synchronous = NORMAL"));
  }
  std::unique_ptr<SqliteEngine> engine(new SqliteEngine(std::move(db), opts, path));
  if (ckpt) engine->StartCheckpoints(std::move(*ckpt));
  return engine;
}

SqliteEngine::SqliteEngine(sqlite::Db db, SqliteOptions opts, const std::string& path)
    : db_(std::move(db)),
      opts_(std::move(opts)),
      reserve_(path + ".reserve", path == ":memory:" ? 0 : opts_.reserve.bytes) {
  reserve_.Refill(/*force=*/true);
}

SqliteEngine::~SqliteEngine() {
  if (ckpt_thread_.joinable()) {
    {
      std::lock_guard lock(ckpt_mu_);
      ckpt_stop_ = true;
    }
    ckpt_cv_.notify_one();
    ckpt_thread_.join();
    Status st = ckpt_db_->Close();
    if (!st.ok()) LOG_WARN("closing the metadata checkpoint connection: {}", st.ToString());
  }
  std::lock_guard lock(mu_);
  if (db_.raw() != nullptr) sqlite3_wal_hook(db_.raw(), nullptr, nullptr);
  Status st = db_.Close();  // the last connection: checkpoints the log and removes it
  if (!st.ok()) LOG_WARN("closing metadata database: {}", st.ToString());
}

void SqliteEngine::StartCheckpoints(Db ckpt) {
  ckpt_db_ = std::move(ckpt);
  std::lock_guard lock(mu_);
  // Replaces SQLite's automatic checkpoint (itself a WAL hook).
  sqlite3_wal_hook(db_.raw(), &SqliteEngine::OnCommit, this);
  ckpt_thread_ = std::thread([this] { RunCheckpoints(); });
}

int SqliteEngine::OnCommit(void* arg, sqlite3* db, const char* schema, int frames) {
  auto* self = static_cast<SqliteEngine*>(arg);
  if (frames < self->log_frames_) self->copied_frames_ = 0;  // the log started over
  self->log_frames_ = frames;
  if (frames >= kInlineFrames) {
    // The thread is behind (or stuck): bound the log as SQLite would.
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc == SQLITE_OK) {
      ++self->inline_checkpoints_;
      self->copied_frames_ = done;
    }
    return SQLITE_OK;  // a failed checkpoint does not fail the commit
  }
  if (frames - std::min(frames, self->copied_frames_.load()) >= kCheckpointFrames) {
    {
      std::lock_guard lock(self->ckpt_mu_);
      self->ckpt_due_ = true;
    }
    self->ckpt_cv_.notify_one();
  }
  return SQLITE_OK;
}

void SqliteEngine::RunCheckpoints() {
  for (;;) {
    {
      std::unique_lock lock(ckpt_mu_);
      ckpt_cv_.wait(lock, [&] { return ckpt_due_ || ckpt_stop_; });
      if (ckpt_stop_) return;
      ckpt_due_ = false;
    }
    // Passive: copies what no reader still needs, never waits for the
    // writers, which go on appending meanwhile. Once a checkpoint has copied
    // every frame, the next writer starts the log over.
    int log = 0, done = 0;
    int rc =
        sqlite3_wal_checkpoint_v2(ckpt_db_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc == SQLITE_OK) {
      ++background_checkpoints_;
      copied_frames_ = done;
    } else if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
      LOG_WARN("metadata store: WAL checkpoint: {}", sqlite3_errmsg(ckpt_db_->raw()));
    }
  }
}

Result<std::unique_ptr<ReadTxn>> SqliteEngine::BeginRead(const ReadOptions& /*options*/) {
  std::unique_lock lock(mu_);
  ASSIGN_OR_RETURN(auto txn, Transaction::Begin(db_, Transaction::Mode::kDeferred));
  return std::unique_ptr<ReadTxn>(new SqliteTxn(*this, std::move(lock), std::move(txn), false));
}

Result<std::unique_ptr<WriteTxn>> SqliteEngine::BeginWrite(const WriteOptions& options) {
  std::unique_lock lock(mu_);
  if (!reserve_.held())
    reserve_.Refill();  // released when the disk filled: back once there is room
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
