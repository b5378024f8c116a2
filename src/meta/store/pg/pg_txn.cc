#include "meta/store/pg/pg_txn.h"

#include <fmt/format.h>

#include "common/logging.h"
#include "meta/store/pg/pg_engine.h"
#include "meta/store/pg/pg_schema.h"

namespace t0fs::meta {

using pgrows::Stmt;
using pgrows::U;

PgTxn::PgTxn(PgEngine& engine, std::unique_ptr<pg::Connection> conn)
    : engine_(engine), conn_(std::move(conn)) {}

PgTxn::~PgTxn() {
  if (open_) conn_->Rollback();  // best effort; a broken connection is re-opened at its next use
  engine_.Release(std::move(conn_));
}

Result<pg::Rows> PgTxn::Run(const Stmt& stmt, const std::vector<pg::Param>& params) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  auto rows = conn_->Prepared(stmt.name, stmt.sql, params);
  if (!rows.ok()) failed_ = rows.status();
  return rows;
}

Status PgTxn::Commit() {
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  if (!failed_.ok()) return failed_;
  // With no failure before it, a COMMIT that fails (a serialization failure
  // found at commit, a lost connection) has its own status; a lost
  // connection leaves the outcome unknown, as engine.h says.
  Status st = conn_->Commit();
  if (!st.ok()) {
    failed_ = st;
    return st;
  }
  open_ = false;
  return st;
}

// ---- counters ----

namespace {

// Statements per counter, built once: nextval, and the lock + raise of
// ReserveId.
struct CounterStmts {
  std::string next_name, next_sql, lock_name, lock_sql, reserve_name, reserve_sql;
};

const CounterStmts& StmtsOf(Counter counter) {
  static const auto* table = [] {
    auto* t = new std::array<CounterStmts, 7>();
    for (uint32_t c = 0; c < t->size(); ++c) {
      const char* seq = pgschema::CounterSequence(static_cast<Counter>(c));
      (*t)[c] = CounterStmts{
          fmt::format("next_{}", seq), fmt::format("SELECT nextval('{}')", seq),
          // ALTER SEQUENCE takes a lock that holds off nextval until this
          // transaction ends, so nothing can be handed out between reading
          // last_value and setval (CACHE 1 is the default: a no-op change).
          fmt::format("lock_{}", seq), fmt::format("ALTER SEQUENCE {} CACHE 1", seq),
          fmt::format("reserve_{}", seq),
          fmt::format("SELECT setval('{0}', GREATEST($1::bigint, last_value)) FROM {0}", seq)};
    }
    return t;
  }();
  return (*table)[static_cast<uint32_t>(counter)];
}

}  // namespace

Result<uint64_t> PgTxn::NextId(Counter counter) {
  const CounterStmts& s = StmtsOf(counter);
  ASSIGN_OR_RETURN(pg::Rows rows, Run(Stmt{s.next_name.c_str(), s.next_sql.c_str()}, {}));
  return rows.UInt(0, 0);
}

Status PgTxn::ReserveId(Counter counter, uint64_t id) {
  const CounterStmts& s = StmtsOf(counter);
  RETURN_IF_ERROR(Exec(Stmt{s.lock_name.c_str(), s.lock_sql.c_str()}, {}));
  return Exec(Stmt{s.reserve_name.c_str(), s.reserve_sql.c_str()}, {U(id)});
}

}  // namespace t0fs::meta
