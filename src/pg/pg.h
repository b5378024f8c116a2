// A small C++ face over libpq (PostgreSQL's client library, Debian's
// libpq-dev): one connection, parameterised statements (prepared once per
// connection), transactions, and errors classified for retry.
//
// Errors: every failure is a Status. Those a caller should retry (after
// rolling back and, for a lost connection, reconnecting) have code
// kTryAgain: serialization failure (SQLSTATE 40001), deadlock (40P01),
// unique violation (23505, a racing insert), a lost or refused connection
// (class 08, and 57P01..57P03: the server shutting down or starting; 25P03:
// a transaction left idle past idle_in_transaction_session_timeout), and
// a server that is read-only (25006: a standby, or a primary being
// demoted). Everything else is kMetaDatabase with the server's message and
// SQLSTATE, and so is a connection refused for good (no such database or
// role, failed authentication, a malformed connection string). Retryable(status)
// says which.
//
// Connection strings are libpq's: a URL ("postgresql://user@h1:5432,h2:5432/db?
// target_session_attrs=read-write") or key=value pairs. With several hosts
// and target_session_attrs=read-write, Open and Reset find the primary by
// themselves (after a failover: the promoted standby).
//
// Pipelines (libpq pipeline mode): Queue() sends a statement without
// waiting for it; Sync() ends the batch, reads every result in order and
// returns the first failure or the rows of the batch's last statement, so a
// batch of any length costs one round trip. SyncLater() ends a batch whose
// results nobody wants (a ROLLBACK): they are read, and dropped, at the next
// use of the connection, before anything else. In a batch, the statements
// after a failed one are skipped by the server (PGRES_PIPELINE_ABORTED).
// A statement queued with `keep` has its rows handed back by Sync too (a
// read sent ahead of the one that waits: several reads, one round trip).
// The plain calls (Exec, Prepared, ExecScript, Begin, Commit) leave pipeline
// mode first, reading what is still due.
//
// Thread safety: a Connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/config.h"
#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace t0fs::pg {

// A statement parameter: text (NULL when absent), or bytes sent as bytea.
class Param {
 public:
  Param() = default;  // NULL
  Param(std::string_view text) : value_(std::string(text)) {}
  Param(const char* text) : value_(std::string(text)) {}
  Param(int64_t v) : value_(std::to_string(v)) {}
  Param(uint64_t v) : value_(std::to_string(v)) {}
  Param(int32_t v) : value_(std::to_string(v)) {}
  Param(uint32_t v) : value_(std::to_string(v)) {}
  Param(bool v) : value_(v ? "t" : "f") {}
  // Bytes for a bytea parameter (sent in binary form).
  static Param Bytes(std::string_view bytes) {
    Param p{bytes};
    p.binary_ = true;
    return p;
  }
  bool null() const { return !value_.has_value(); }
  bool binary() const { return binary_; }
  const std::string& value() const { return *value_; }

 private:
  std::optional<std::string> value_;
  bool binary_ = false;
};

// The rows of one statement (text format). Owns the libpq result.
class Rows {
 public:
  Rows() = default;
  explicit Rows(pg_result* res);
  ~Rows();
  Rows(Rows&& other) noexcept;
  Rows& operator=(Rows&& other) noexcept;
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  int size() const;  // rows
  int columns() const;
  // Rows affected by INSERT/UPDATE/DELETE.
  uint64_t affected() const;
  bool IsNull(int row, int col) const;
  std::string_view Text(int row, int col) const;
  int64_t Int(int row, int col) const;  // 0 for NULL
  uint64_t UInt(int row, int col) const { return static_cast<uint64_t>(Int(row, col)); }
  bool Bool(int row, int col) const;
  // A bytea column, decoded.
  std::string Bytes(int row, int col) const;

 private:
  pg_result* res_ = nullptr;
};

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

class Connection {
 public:
  // Connects; fails after `timeout` (connect_timeout, whole seconds, at
  // least 1). kTryAgain when the server is unreachable or read-only.
  // `setup` (SQL, e.g. session SETs) runs on every connection made, this
  // one and Reset's, before anything else.
  static Result<std::unique_ptr<Connection>> Open(const std::string& conninfo, Duration timeout,
                                                  std::string setup = "");
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` with $1.. `params`; `name` non-empty prepares it once on this
  // connection (then only the parameters travel).
  Result<Rows> Exec(std::string_view sql, std::initializer_list<Param> params = {});
  Result<Rows> Exec(std::string_view sql, const std::vector<Param>& params);
  Result<Rows> Prepared(const std::string& name, std::string_view sql, const std::vector<Param>& params);
  // Several statements without parameters (schema scripts).
  Status ExecScript(std::string_view sql);

  // ---- pipelines (see the header comment) ----
  // Queues prepared statement `name` (prepared in the same batch on its
  // first use on this connection). Fails only if the connection is broken.
  Status Queue(const std::string& name, std::string_view sql, const std::vector<Param>& params,
               bool keep = false);
  // Queues `sql`, one statement without parameters (BEGIN, COMMIT).
  Status QueueSql(std::string_view sql);
  // Statements queued since the last Sync/SyncLater.
  size_t queued() const { return batch_; }
  // Ends the batch and waits for it: the first failure of the batch, else
  // the rows of its last statement, and in `kept` (if given) those of its
  // statements queued with `keep`, in order. Earlier batches of SyncLater
  // are read (and dropped) first.
  Result<Rows> Sync(std::vector<Rows>* kept = nullptr);
  // Ends the batch and sends it without waiting; its results are dropped.
  // A connection that cannot send is left unhealthy.
  void SyncLater();

  Status Begin(Isolation isolation = Isolation::kReadCommitted);
  Status Commit();
  // Best effort; never fails the caller (a broken connection is reset later).
  void Rollback();

  // Whether the connection is usable; Reset reconnects (same conninfo).
  // A server that answered it is read-only (25006: a standby, or a primary
  // being demoted) makes the connection unhealthy too: with several hosts,
  // only a new connection finds the writable one.
  bool healthy() const;
  // healthy(), after reading what the server sent meanwhile without waiting
  // (a connection the server closed while idle is found here).
  bool Alive();
  Status Reset();
  // host:port of the server we are connected to.
  std::string server() const;
  // Pipeline batches waited for (Sync calls): a PgTxn's round trips.
  uint64_t round_trips() const { return round_trips_; }
  // The statements prepared on this connection so far: name -> text.
  const std::unordered_map<std::string, std::string>& prepared() const { return prepared_; }

 private:
  Connection(pg_conn* conn, std::string conninfo, Duration timeout, std::string setup);
  Result<Rows> Check(pg_result* res, std::string_view what);
  Status EnterPipeline();
  // Reads every result due, through the end of the last batch; leaves
  // pipeline mode. For the plain calls.
  Status LeavePipeline();
  // Reads the results of the oldest batch due, through its sync: its first
  // failure, else the rows of its last statement.
  Result<Rows> ReadBatch(std::vector<Rows>* kept = nullptr);
  // Forgets every result due (the connection is lost or broken) and returns `st`.
  Status Drop(Status st);
  // The connection can no longer be trusted (a result missing from a
  // pipeline): healthy() is false until Reset.
  Status Broken(std::string_view what);

  // One statement of a pipeline whose results are still due.
  struct Due {
    enum Kind { kPrepare, kStatement, kSync } kind;
    std::string what;   // statement name or text, for messages
    bool keep = false;  // its rows are handed back by Sync
  };

  pg_conn* conn_;
  const std::string conninfo_;
  const Duration timeout_;
  const std::string setup_;
  std::unordered_map<std::string, std::string>
      prepared_;  // statements prepared on this connection: name -> text
  bool read_only_ = false;                           // the server said it cannot write (25006)
  bool broken_ = false;                              // see Broken()
  bool pipeline_ = false;                            // in libpq pipeline mode
  std::deque<Due> due_;                              // results still to read, in order
  size_t batch_ = 0;                                 // statements queued since the last sync
  size_t dropped_ = 0;  // batches of SyncLater at the front of due_ (a Sync reads its own at once)
  uint64_t round_trips_ = 0;
};

// Whether a caller should retry after `status` (see the header comment).
inline bool Retryable(const Status& status) { return status.code() == StatusCode::kTryAgain; }

// The SQLSTATE classes the header comment lists: retryable ones.
bool RetryableSqlState(std::string_view sqlstate);

// idle_in_transaction_session_timeout ended the session (retryable, on a
// new connection).
inline constexpr std::string_view kIdleTransactionTimeout = "25P03";

}  // namespace t0fs::pg
