// Thin RAII wrappers over the SQLite C API that speak Status.
//
//  - Db owns one connection and a cache of prepared statements keyed by their
//    SQL text, so a statement is compiled once per connection.
//  - Statement owns one sqlite3_stmt: typed Bind, Step, Column accessors.
//  - StatementLease lends a cached Statement out; giving it back resets it and
//    clears its bindings. Asking for a statement that is already lent out
//    (a nested use of the same SQL) yields a fresh, uncached one, so nesting is
//    safe, merely slower.
//  - Transaction is a guard: BEGIN [IMMEDIATE] … COMMIT, ROLLBACK if dropped.
//
// Every failure is kMetaDatabase carrying SQLite's message and the SQL text
// (kNoSpace when the disk is full).
// SQLITE_BUSY is first waited out by the connection's busy_timeout, then
// retried a few times more before it is reported.
//
// Thread safety: none. A Db and everything it hands out are used by one
// thread at a time (SqliteEngine holds its mutex around every use).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "common/ids.h"
#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace t0fs::meta::sqlite {

// Binds a string as a BLOB instead of TEXT. File names, symlink targets and
// xattrs are byte strings, stored and compared as BLOBs; one column is always
// bound with one type (SQLite never finds a TEXT equal to a BLOB).
struct Blob {
  std::string_view bytes;
};

template <typename T>
struct IsStrongId : std::false_type {};
template <typename Tag>
struct IsStrongId<StrongId<Tag>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds `args` to ?1, ?2, … in order. Integers (and ids, enums, bools) bind
  // as INTEGER (uint64 values are stored bit-for-bit as int64), strings as
  // TEXT, Blob as BLOB, nullptr and an empty optional as NULL. A bind error
  // is reported by Step.
  template <typename... Args>
  Statement& BindAll(const Args&... args) {
    int idx = 1;
    (BindOne(idx++, args), ...);
    return *this;
  }
  void BindInt(int idx, int64_t value);
  void BindText(int idx, std::string_view value);
  void BindBlob(int idx, std::string_view value);
  void BindNull(int idx);

  // One step: true when a row is ready, false when the statement is done.
  Result<bool> Step();
  // Steps to completion, discarding any rows.
  Status Run();
  // Resets the statement and clears its bindings (ready for reuse).
  void Reset();

  int64_t Int(int col) const;
  uint64_t U64(int col) const { return static_cast<uint64_t>(Int(col)); }
  uint32_t U32(int col) const { return static_cast<uint32_t>(Int(col)); }
  bool IsNull(int col) const;
  // TEXT or BLOB bytes of a column (empty for NULL).
  std::string Bytes(int col) const;

  const std::string& sql() const { return sql_; }

 private:
  friend class Db;
  friend class StatementLease;

  template <typename T>
  void BindOne(int idx, const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      BindInt(idx, value ? 1 : 0);
    } else if constexpr (std::is_integral_v<T>) {
      BindInt(idx, static_cast<int64_t>(value));
    } else if constexpr (std::is_enum_v<T>) {
      BindInt(idx, static_cast<int64_t>(value));
    } else if constexpr (IsStrongId<T>::value) {
      BindInt(idx, static_cast<int64_t>(value.value()));
    } else if constexpr (std::is_same_v<T, Blob>) {
      BindBlob(idx, value.bytes);
    } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
      BindNull(idx);
    } else if constexpr (IsOptional<T>::value) {
      if (value.has_value()) {
        BindOne(idx, *value);
      } else {
        BindNull(idx);
      }
    } else {
      BindText(idx, std::string_view(value));
    }
  }
  Status Error(int rc, std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  int bind_rc_ = 0;         // first bind error since the last Reset
  bool rows_seen_ = false;  // a row was returned since the last Reset (no BUSY retry then)
  bool leased_ = false;     // lent out by Db's cache
};

// A Statement borrowed from Db's cache (or owned, for a nested use of the same
// SQL). Resets the statement when dropped.
class StatementLease {
 public:
  StatementLease(Statement* cached, std::unique_ptr<Statement> owned)
      : stmt_(cached != nullptr ? cached : owned.get()), owned_(std::move(owned)) {}
  StatementLease(StatementLease&& o) noexcept
      : stmt_(std::exchange(o.stmt_, nullptr)), owned_(std::move(o.owned_)) {}
  StatementLease& operator=(StatementLease&&) = delete;
  StatementLease(const StatementLease&) = delete;
  StatementLease& operator=(const StatementLease&) = delete;
  ~StatementLease();

  Statement* operator->() const { return stmt_; }
  Statement& operator*() const { return *stmt_; }

 private:
  Statement* stmt_;
  std::unique_ptr<Statement> owned_;
};

class Db {
 public:
  // Opens (creating if needed) the database at `path`; ":memory:" is a private
  // in-memory database.
  static Result<Db> Open(const std::string& path, std::chrono::milliseconds busy_timeout);
  Db() = default;
  Db(Db&& o) noexcept;
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();
  // Finalizes the cached statements and closes the connection.
  Status Close();

  // Runs a script of statements that return no rows (DDL, PRAGMA).
  Status Exec(std::string_view script);
  // A prepared (cached) statement for `sql` with `args` bound.
  template <typename... Args>
  Result<StatementLease> Query(std::string_view sql, const Args&... args) {
    ASSIGN_OR_RETURN(StatementLease lease, Prepare(sql));
    lease->BindAll(args...);
    return lease;
  }
  // Runs a statement to completion.
  template <typename... Args>
  Status Run(std::string_view sql, const Args&... args) {
    ASSIGN_OR_RETURN(StatementLease lease, Query(sql, args...));
    return lease->Run();
  }
  // The first column of the first row; nullopt when there is no row.
  template <typename... Args>
  Result<std::optional<int64_t>> QueryInt(std::string_view sql, const Args&... args) {
    ASSIGN_OR_RETURN(StatementLease lease, Query(sql, args...));
    ASSIGN_OR_RETURN(bool row, lease->Step());
    if (!row) return std::optional<int64_t>();
    return std::optional<int64_t>(lease->Int(0));
  }
  Result<StatementLease> Prepare(std::string_view sql);

  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  // kMetaDatabase with the connection's last error message.
  Status Error(int rc, std::string_view what) const;
  sqlite3* raw() const { return db_; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  explicit Db(sqlite3* db) : db_(db) {}

  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>, StringHash, std::equal_to<>> cache_;
};

// BEGIN … COMMIT guard; a transaction not committed is rolled back when the
// guard is dropped.
class Transaction {
 public:
  enum class Mode {
    kDeferred,   // takes the write lock at the first write (reads: a snapshot)
    kImmediate,  // takes the write lock at BEGIN, so no write can fail with BUSY later
  };
  static Result<Transaction> Begin(Db& db, Mode mode);
  Transaction(Transaction&& o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Commit();
  Status Rollback();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;  // null once finished
};

}  // namespace t0fs::meta::sqlite
