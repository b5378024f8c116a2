#include "meta/store/sqlite/sqlite_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <thread>

#include "common/logging.h"
#include "meta/store/sqlite/wal_vfs.h"

namespace t0fs::meta::sqlite {
namespace {

// Extra attempts after SQLite's own busy handler (busy_timeout) gave up.
constexpr int kBusyRetries = 3;

// A full disk is ENOSPC to the client (kNoSpace); anything else, EIO.
StatusCode CodeOf(int rc) {
  return (rc & 0xff) == SQLITE_FULL ? StatusCode::kNoSpace : StatusCode::kMetaDatabase;
}

bool IsBusy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

void BusyBackoff(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
}

}  // namespace

// ---- Statement ----

Statement::Statement(Statement&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)),
      stmt_(std::exchange(o.stmt_, nullptr)),
      sql_(std::move(o.sql_)),
      bind_rc_(o.bind_rc_),
      rows_seen_(o.rows_seen_),
      leased_(o.leased_) {}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(o.db_, nullptr);
    stmt_ = std::exchange(o.stmt_, nullptr);
    sql_ = std::move(o.sql_);
    bind_rc_ = o.bind_rc_;
    rows_seen_ = o.rows_seen_;
    leased_ = o.leased_;
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void Statement::BindInt(int idx, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, idx, value);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::BindText(int idx, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies, so temporaries may be bound.
  int rc =
      sqlite3_bind_text64(stmt_, idx, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::BindBlob(int idx, std::string_view value) {
  // A zero-length blob must still be a BLOB, not NULL: pass a non-null pointer.
  static const char kEmpty = 0;
  const void* data = value.empty() ? &kEmpty : value.data();
  int rc = sqlite3_bind_blob64(stmt_, idx, data, value.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::BindNull(int idx) {
  int rc = sqlite3_bind_null(stmt_, idx);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) return Error(bind_rc_, "bind");
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      rows_seen_ = true;
      return true;
    }
    if (rc == SQLITE_DONE) return false;
    // A BUSY before any row is safe to retry from the start; after rows were
    // returned the caller has already consumed part of the result.
    if (IsBusy(rc) && !rows_seen_ && attempt < kBusyRetries) {
      sqlite3_reset(stmt_);
      BusyBackoff(attempt);
      continue;
    }
    Status st = Error(rc, "step");
    sqlite3_reset(stmt_);
    return st;
  }
}

Status Statement::Run() {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = SQLITE_OK;
  rows_seen_ = false;
}

int64_t Statement::Int(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

bool Statement::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::string Statement::Bytes(int col) const {
  // sqlite3_column_blob first, then _bytes: the documented safe order.
  const void* data = sqlite3_column_blob(stmt_, col);
  int len = sqlite3_column_bytes(stmt_, col);
  if (data == nullptr || len <= 0) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(len));
}

Status Statement::Error(int rc, std::string_view what) const {
  const char* msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  return Status(CodeOf(rc), fmt::format("sqlite {} ({}): {} [{}]", what, rc, msg, sql_));
}

StatementLease::~StatementLease() {
  if (stmt_ == nullptr) return;
  stmt_->Reset();
  stmt_->leased_ = false;
}

// ---- Db ----

Result<Db> Db::Open(const std::string& path, std::chrono::milliseconds busy_timeout) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the caller serialises all use of the connection (see header).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, WalVfsName());
  if (rc != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return Status(StatusCode::kMetaDatabase, fmt::format("open {}: {}", path, msg));
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(busy_timeout.count()));
  return Db(raw);
}

Db::Db(Db&& o) noexcept : db_(std::exchange(o.db_, nullptr)), cache_(std::move(o.cache_)) {}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    (void)Close();
    db_ = std::exchange(o.db_, nullptr);
    cache_ = std::move(o.cache_);
  }
  return *this;
}

Db::~Db() {
  Status st = Close();
  if (!st.ok()) LOG_WARN("closing metadata database: {}", st.ToString());
}

Status Db::Close() {
  cache_.clear();  // finalizes every cached statement
  if (db_ == nullptr) return Status::Ok();
  int rc = sqlite3_close_v2(std::exchange(db_, nullptr));
  if (rc != SQLITE_OK) {
    return Status(StatusCode::kMetaDatabase, fmt::format("close: {}", sqlite3_errstr(rc)));
  }
  return Status::Ok();
}

Status Db::Exec(std::string_view script) {
  std::string sql(script);
  for (int attempt = 0;; ++attempt) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    std::string msg = err != nullptr ? err : "";
    sqlite3_free(err);
    if (rc == SQLITE_OK) return Status::Ok();
    if (IsBusy(rc) && attempt < kBusyRetries) {
      BusyBackoff(attempt);
      continue;
    }
    return Status(CodeOf(rc), fmt::format("sqlite exec ({}): {} [{}]", rc, msg, sql));
  }
}

Result<StatementLease> Db::Prepare(std::string_view sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second->leased_) {
    it->second->leased_ = true;
    return StatementLease(it->second.get(), nullptr);
  }
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return Status(StatusCode::kMetaDatabase,
                  fmt::format("sqlite prepare: {} [{}]", sqlite3_errmsg(db_), sql));
  }
  auto stmt = std::make_unique<Statement>(db_, raw, std::string(sql));
  if (it != cache_.end()) return StatementLease(nullptr, std::move(stmt));  // nested use
  stmt->leased_ = true;
  Statement* cached = stmt.get();
  cache_.emplace(std::string(sql), std::move(stmt));
  return StatementLease(cached, nullptr);
}

int64_t Db::Changes() const {
  return sqlite3_changes64(db_);
}

Status Db::Error(int rc, std::string_view what) const {
  return Status(CodeOf(rc), fmt::format("sqlite {} ({}): {}", what, rc, sqlite3_errmsg(db_)));
}

// ---- Transaction ----

Result<Transaction> Transaction::Begin(Db& db, Mode mode) {
  RETURN_IF_ERROR(db.Run(mode == Mode::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  Status st = Rollback();
  if (!st.ok()) LOG_WARN("metadata rollback: {}", st.ToString());
}

Status Transaction::Commit() {
  Db* db = std::exchange(db_, nullptr);
  Status st = db->Run("COMMIT");
  if (!st.ok()) {
    // A failed COMMIT may leave the transaction open (e.g. BUSY); end it.
    if (sqlite3_get_autocommit(db->raw()) == 0) (void)db->Run("ROLLBACK");
  }
  return st;
}

Status Transaction::Rollback() {
  Db* db = std::exchange(db_, nullptr);
  // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL).
  if (sqlite3_get_autocommit(db->raw()) != 0) return Status::Ok();
  return db->Run("ROLLBACK");
}

}  // namespace t0fs::meta::sqlite
