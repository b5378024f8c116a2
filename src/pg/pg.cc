#include "pg/pg.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/logging.h"

namespace t0fs::pg {
namespace {

// libpq's messages end with a newline (sometimes two lines: ERROR + DETAIL).
std::string Trim(const char* text) {
  std::string s = text != nullptr ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

// Connection failures that waiting does not cure: a wrong database, role,
// password or connection string. libpq gives no SQLSTATE for a failed
// connect, so its (English, stable) messages decide.
bool PermanentConnectError(std::string_view msg) {
  for (std::string_view permanent : {"does not exist", "authentication failed", "no pg_hba.conf entry",
                                     "invalid connection option", "invalid URI", "invalid integer value",
                                     "missing \"=\"", "invalid sslmode", "invalid target_session_attrs"}) {
    if (msg.find(permanent) != std::string_view::npos) return true;
  }
  return false;
}

Status ConnectionError(pg_conn* conn, std::string_view what) {
  std::string msg = Trim(PQerrorMessage(conn));
  const StatusCode code = PermanentConnectError(msg) ? StatusCode::kMetaDatabase : StatusCode::kTryAgain;
  return Status(code, fmt::format("{}: {}", what, msg.empty() ? "connection lost" : msg));
}

std::string WithTimeout(const std::string& conninfo, Duration timeout) {
  const long seconds = std::max<long>(1, static_cast<long>((timeout.value.count() + 999) / 1000));
  // A URL takes it as a query parameter, key=value strings as a pair.
  if (conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0) {
    if (conninfo.find("connect_timeout=") != std::string::npos) return conninfo;
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") +
           fmt::format("connect_timeout={}", seconds);
  }
  if (conninfo.find("connect_timeout") != std::string::npos) return conninfo;
  return conninfo + fmt::format(" connect_timeout={}", seconds);
}

// A fresh connection's setup (Connection::Open): ok, or why not.
Status RunSetup(pg_conn* conn, const std::string& setup) {
  if (setup.empty()) return Status::Ok();
  pg_result* res = PQexec(conn, setup.c_str());
  const bool ok = res != nullptr && PQresultStatus(res) == PGRES_COMMAND_OK;
  std::string why =
      ok ? "" : Trim(res != nullptr ? PQresultErrorMessage(res) : PQerrorMessage(conn));
  PQclear(res);
  if (ok) return Status::Ok();
  if (PQstatus(conn) != CONNECTION_OK)
    return ConnectionError(conn, "set up a PostgreSQL connection");
  return Status(StatusCode::kInternal,
                fmt::format("PostgreSQL: setting up a connection ({}): {}", setup, why));
}

// Server notices ("table does not exist, skipping") are not errors: they go
// to the debug log instead of libpq's default, stderr.
void QuietNotice(void*, const char* message) { LOG_DEBUG("postgres: {}", Trim(message)); }

}  // namespace

bool RetryableSqlState(std::string_view s) {
  return s == "40001" || s == "40P01" || s == "23505" || s == "25006" || s.rfind("08", 0) == 0 ||
         s == "57P01" || s == "57P02" || s == "57P03" || s == kIdleTransactionTimeout;
}

// ---------------------------------------------------------------- Rows

Rows::Rows(pg_result* res) : res_(res) {}
Rows::~Rows() {
  if (res_ != nullptr) PQclear(res_);
}
Rows::Rows(Rows&& other) noexcept : res_(std::exchange(other.res_, nullptr)) {}
Rows& Rows::operator=(Rows&& other) noexcept {
  if (this != &other) {
    if (res_ != nullptr) PQclear(res_);
    res_ = std::exchange(other.res_, nullptr);
  }
  return *this;
}

int Rows::size() const { return res_ != nullptr ? PQntuples(res_) : 0; }
int Rows::columns() const { return res_ != nullptr ? PQnfields(res_) : 0; }
uint64_t Rows::affected() const {
  const char* n = res_ != nullptr ? PQcmdTuples(res_) : "";
  return *n != '\0' ? std::strtoull(n, nullptr, 10) : 0;
}
bool Rows::IsNull(int row, int col) const { return PQgetisnull(res_, row, col) != 0; }
std::string_view Rows::Text(int row, int col) const {
  return std::string_view(PQgetvalue(res_, row, col), static_cast<size_t>(PQgetlength(res_, row, col)));
}
int64_t Rows::Int(int row, int col) const {
  if (IsNull(row, col)) return 0;
  return std::strtoll(PQgetvalue(res_, row, col), nullptr, 10);
}
bool Rows::Bool(int row, int col) const {
  std::string_view t = Text(row, col);
  return t == "t" || t == "true" || t == "1";
}
std::string Rows::Bytes(int row, int col) const {
  if (IsNull(row, col)) return "";
  size_t len = 0;
  unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(res_, row, col)), &len);
  if (raw == nullptr) return "";
  std::string out(reinterpret_cast<const char*>(raw), len);
  PQfreemem(raw);
  return out;
}

// ---------------------------------------------------------------- Connection

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& conninfo, Duration timeout,
                                                     std::string setup) {
  pg_conn* conn = PQconnectdb(WithTimeout(conninfo, timeout).c_str());
  if (conn == nullptr) return Status(StatusCode::kInternal, "libpq: out of memory");
  Status st = PQstatus(conn) == CONNECTION_OK ? RunSetup(conn, setup)
                                              : ConnectionError(conn, "connect to PostgreSQL");
  if (!st.ok()) {
    PQfinish(conn);
    return st;
  }
  PQsetNoticeProcessor(conn, QuietNotice, nullptr);
  return std::unique_ptr<Connection>(new Connection(conn, conninfo, timeout, std::move(setup)));
}

Connection::Connection(pg_conn* conn, std::string conninfo, Duration timeout, std::string setup)
    : conn_(conn), conninfo_(std::move(conninfo)), timeout_(timeout), setup_(std::move(setup)) {}

Connection::~Connection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool Connection::healthy() const {
  return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK && !read_only_ && !broken_;
}

bool Connection::Alive() {
  // libpq's socket is non-blocking underneath: this reads only what is there.
  if (conn_ != nullptr && PQconsumeInput(conn_) == 0) return false;
  return healthy();
}

std::string Connection::server() const {
  if (conn_ == nullptr) return "";
  return fmt::format("{}:{}", PQhost(conn_) != nullptr ? PQhost(conn_) : "?", PQport(conn_) != nullptr ? PQport(conn_) : "?");
}

Status Connection::Reset() {
  // A fresh connection (not PQreset): with several hosts, libpq then looks
  // for the read-write one again.
  pg_conn* fresh = PQconnectdb(WithTimeout(conninfo_, timeout_).c_str());
  if (fresh == nullptr) return Status(StatusCode::kInternal, "libpq: out of memory");
  Status st = PQstatus(fresh) == CONNECTION_OK ? RunSetup(fresh, setup_)
                                               : ConnectionError(fresh, "reconnect to PostgreSQL");
  if (!st.ok()) {
    PQfinish(fresh);
    return st;
  }
  if (conn_ != nullptr) PQfinish(conn_);
  PQsetNoticeProcessor(fresh, QuietNotice, nullptr);
  conn_ = fresh;
  prepared_.clear();
  read_only_ = false;
  broken_ = false;
  pipeline_ = false;
  (void)Drop(Status::Ok());
  return Status::Ok();
}

Result<Rows> Connection::Check(pg_result* res, std::string_view what) {
  Rows rows(res);
  if (res == nullptr) return ConnectionError(conn_, what);
  const ExecStatusType st = PQresultStatus(res);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return rows;
  const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  std::string sqlstate = state != nullptr ? state : "";
  std::string msg = Trim(PQresultErrorMessage(res));
  if (sqlstate.empty() && PQstatus(conn_) != CONNECTION_OK) return ConnectionError(conn_, what);
  if (sqlstate == "25006") read_only_ = true;
  // The server ended this session (a transaction left idle too long) and
  // closes it: the pool reconnects before the next use.
  if (sqlstate == kIdleTransactionTimeout) broken_ = true;
  const StatusCode code = RetryableSqlState(sqlstate) || PQstatus(conn_) != CONNECTION_OK
                              ? StatusCode::kTryAgain
                              : StatusCode::kMetaDatabase;
  return Status(code, fmt::format("{}: {} (SQLSTATE {})", what, msg, sqlstate.empty() ? "none" : sqlstate));
}

Result<Rows> Connection::Exec(std::string_view sql, std::initializer_list<Param> params) {
  return Exec(sql, std::vector<Param>(params));
}

namespace {

struct Wire {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

Wire ToWire(const std::vector<Param>& params) {
  Wire w;
  for (const Param& p : params) {
    w.values.push_back(p.null() ? nullptr : p.value().data());
    w.lengths.push_back(p.null() ? 0 : static_cast<int>(p.value().size()));
    w.formats.push_back(p.binary() ? 1 : 0);
  }
  return w;
}

}  // namespace

Result<Rows> Connection::Exec(std::string_view sql, const std::vector<Param>& params) {
  if (conn_ == nullptr) return Status(StatusCode::kTryAgain, "PostgreSQL: not connected");
  RETURN_IF_ERROR(LeavePipeline());
  const std::string text(sql);
  Wire w = ToWire(params);
  pg_result* res = PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr, w.values.data(),
                                w.lengths.data(), w.formats.data(), 0);
  return Check(res, text.size() > 60 ? text.substr(0, 60) + "..." : text);
}

Result<Rows> Connection::Prepared(const std::string& name, std::string_view sql, const std::vector<Param>& params) {
  if (conn_ == nullptr) return Status(StatusCode::kTryAgain, "PostgreSQL: not connected");
  RETURN_IF_ERROR(LeavePipeline());
  if (!prepared_.count(name)) {
    const std::string text(sql);
    pg_result* res = PQprepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params.size()), nullptr);
    auto prepared = Check(res, "prepare " + name);
    if (!prepared.ok()) return prepared.status();
    prepared_[name] = text;
  }
  Wire w = ToWire(params);
  pg_result* res = PQexecPrepared(conn_, name.c_str(), static_cast<int>(params.size()), w.values.data(),
                                  w.lengths.data(), w.formats.data(), 0);
  return Check(res, name);
}

Status Connection::ExecScript(std::string_view sql) {
  if (conn_ == nullptr) return Status(StatusCode::kTryAgain, "PostgreSQL: not connected");
  RETURN_IF_ERROR(LeavePipeline());
  const std::string text(sql);
  return Check(PQexec(conn_, text.c_str()), "script").status();
}

// ---------------------------------------------------------------- pipelines

Status Connection::Drop(Status st) {
  due_.clear();
  batch_ = 0;
  dropped_ = 0;
  return st;
}

Status Connection::Broken(std::string_view what) {
  broken_ = true;
  if (PQstatus(conn_) != CONNECTION_OK) return Drop(ConnectionError(conn_, what));
  return Drop(Status(StatusCode::kTryAgain, fmt::format("{}: PostgreSQL pipeline out of step", what)));
}

Status Connection::EnterPipeline() {
  if (pipeline_) return Status::Ok();
  if (PQenterPipelineMode(conn_) == 0) return Broken("enter pipeline mode");
  pipeline_ = true;
  return Status::Ok();
}

Status Connection::LeavePipeline() {
  if (!pipeline_) return Status::Ok();
  if (batch_ > 0) SyncLater();  // a batch nobody synced: its results are not wanted either
  while (dropped_ > 0) {
    --dropped_;
    auto dropped = ReadBatch();
    if (!dropped.ok() && !healthy()) return dropped.status();
  }
  if (PQexitPipelineMode(conn_) == 0) return Broken("leave pipeline mode");
  pipeline_ = false;
  return Status::Ok();
}

Status Connection::Queue(const std::string& name, std::string_view sql,
                         const std::vector<Param>& params, bool keep) {
  if (conn_ == nullptr) return Status(StatusCode::kTryAgain, "PostgreSQL: not connected");
  if (broken_) return Status(StatusCode::kTryAgain, "PostgreSQL: connection out of step");
  RETURN_IF_ERROR(EnterPipeline());
  if (!prepared_.count(name)) {
    const std::string text(sql);
    if (PQsendPrepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params.size()), nullptr) == 0) {
      return Broken("prepare " + name);
    }
    prepared_[name] = text;  // erased again if the prepare fails (ReadBatch)
    due_.push_back(Due{Due::kPrepare, name});
  }
  Wire w = ToWire(params);
  if (PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(params.size()), w.values.data(), w.lengths.data(),
                          w.formats.data(), 0) == 0) {
    return Broken(name);
  }
  due_.push_back(Due{Due::kStatement, name, keep});
  ++batch_;
  return Status::Ok();
}

Status Connection::QueueSql(std::string_view sql) {
  if (conn_ == nullptr) return Status(StatusCode::kTryAgain, "PostgreSQL: not connected");
  if (broken_) return Status(StatusCode::kTryAgain, "PostgreSQL: connection out of step");
  RETURN_IF_ERROR(EnterPipeline());
  const std::string text(sql);
  if (PQsendQueryParams(conn_, text.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) == 0) return Broken(text);
  due_.push_back(Due{Due::kStatement, text});
  ++batch_;
  return Status::Ok();
}

Result<Rows> Connection::Sync(std::vector<Rows>* kept) {
  if (!pipeline_ || broken_) return Status(StatusCode::kTryAgain, "PostgreSQL: no pipeline to sync");
  if (PQpipelineSync(conn_) == 0) return Broken("sync");
  due_.push_back(Due{Due::kSync, "sync"});
  batch_ = 0;
  ++round_trips_;
  while (dropped_ > 0) {
    --dropped_;
    auto dropped = ReadBatch();
    if (!dropped.ok() && !healthy()) return dropped.status();
  }
  return ReadBatch(kept);
}

void Connection::SyncLater() {
  if (!pipeline_ || broken_ || conn_ == nullptr) return;
  if (PQpipelineSync(conn_) == 0) {
    (void)Broken("sync");
    return;
  }
  due_.push_back(Due{Due::kSync, "sync"});
  batch_ = 0;
  ++dropped_;
}

Result<Rows> Connection::ReadBatch(std::vector<Rows>* kept) {
  Status first;  // the batch's first failure
  Rows last;
  while (!due_.empty()) {
    Due due = std::move(due_.front());
    due_.pop_front();
    pg_result* res = PQgetResult(conn_);
    if (due.kind == Due::kSync) {
      const bool synced = res != nullptr && PQresultStatus(res) == PGRES_PIPELINE_SYNC;
      if (res != nullptr) PQclear(res);
      if (!synced) return Broken(due.what);
      if (!first.ok()) return first;
      return last;
    }
    if (res == nullptr) return Broken(due.what);
    if (PQresultStatus(res) == PGRES_PIPELINE_ABORTED) {
      // Skipped after an earlier failure of the batch.
      PQclear(res);
      if (due.kind == Due::kPrepare) prepared_.erase(due.what);
    } else {
      auto rows = Check(res, due.kind == Due::kPrepare ? "prepare " + due.what : due.what);
      if (!rows.ok()) {
        if (due.kind == Due::kPrepare) prepared_.erase(due.what);
        if (first.ok()) first = rows.status();
        if (PQstatus(conn_) != CONNECTION_OK) {
          broken_ = true;
          return Drop(first);
        }
      } else if (due.kind == Due::kStatement) {
        if (due.keep && kept != nullptr) {
          kept->push_back(std::move(rows).value());
          last = Rows();
        } else {
          last = std::move(rows).value();
        }
      }
    }
    // Each statement's results end with a null result.
    pg_result* end = PQgetResult(conn_);
    if (end != nullptr) {
      PQclear(end);
      return Broken(due.what);
    }
  }
  return Broken("pipeline without sync");
}

Status Connection::Begin(Isolation isolation) {
  const char* sql = isolation == Isolation::kSerializable      ? "BEGIN ISOLATION LEVEL SERIALIZABLE"
                    : isolation == Isolation::kRepeatableRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ"
                                                               : "BEGIN";
  return Exec(sql).status();
}

Status Connection::Commit() { return Exec("COMMIT").status(); }

void Connection::Rollback() {
  if (healthy()) (void)Exec("ROLLBACK");
}

}  // namespace t0fs::pg
