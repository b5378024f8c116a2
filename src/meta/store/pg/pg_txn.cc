#include "meta/store/pg/pg_txn.h"

#include <fmt/format.h>

#include "common/logging.h"
#include "meta/store/pg/pg_engine.h"
#include "meta/store/pg/pg_schema.h"

namespace t0fs::meta {

using pgrows::Stmt;
using pgrows::U;

PgTxn::PgTxn(PgEngine& engine, std::unique_ptr<pg::Connection> conn, std::vector<std::string> begin)
    : engine_(engine), conn_(std::move(conn)), begin_(std::move(begin)) {}

PgTxn::~PgTxn() {
  // Not committed: roll back without waiting (the connection reads the
  // result at its next use, ahead of the next transaction's). A broken
  // connection is re-opened at its next use instead.
  if (open_ && begun_ && conn_->healthy() && conn_->QueueSql("ROLLBACK").ok()) conn_->SyncLater();
  engine_.Release(std::move(conn_));
}

Status PgTxn::Queue(const Stmt* stmt, const std::vector<pg::Param>& params, bool keep) {
  if (!begun_) {
    for (const std::string& sql : begin_) RETURN_IF_ERROR(conn_->QueueSql(sql));
    engine_.statements_.fetch_add(begin_.size(), std::memory_order_relaxed);
    begun_ = true;
  }
  engine_.statements_.fetch_add(1, std::memory_order_relaxed);
  if (stmt == nullptr) return conn_->QueueSql("COMMIT");
  if (!synced_) first_batch_.push_back(Queued{*stmt, params, keep});
  return conn_->Queue(stmt->name, stmt->sql, params, keep);
}

Result<pg::Rows> PgTxn::Sync(bool committing) {
  std::vector<pg::Rows> kept;
  engine_.round_trips_.fetch_add(1, std::memory_order_relaxed);
  auto rows = conn_->Sync(&kept);
  if (!rows.ok() && !synced_ && !committing && !conn_->healthy()) {
    // Lost before this transaction had anything back, and before COMMIT:
    // the server applied none of it. Once more on a fresh connection.
    LOG_DEBUG("PostgreSQL connection lost at the start of a transaction ({}); resending",
              rows.status().ToString());
    if (conn_->Reset().ok()) {
      begun_ = false;
      auto batch = std::move(first_batch_);
      first_batch_.clear();
      Status queued;
      for (const Queued& q : batch) {
        queued = Queue(&q.stmt, q.params, q.keep);
        if (!queued.ok()) break;
      }
      kept.clear();
      rows = queued.ok() ? conn_->Sync(&kept) : Result<pg::Rows>(queued);
    }
  }
  synced_ = true;
  first_batch_.clear();
  std::vector<Take> pending = std::move(pending_);
  pending_.clear();
  if (!rows.ok()) return rows;
  if (kept.size() != pending.size()) {
    return Status(StatusCode::kInternal,
                  fmt::format("PostgreSQL: {} prefetch(es) queued, {} came back", pending.size(),
                              kept.size()));
  }
  for (size_t i = 0; i < pending.size(); ++i) pending[i](kept[i]);
  return rows;
}

Status PgTxn::Prefetch(const Stmt& stmt, const std::vector<pg::Param>& params, Take take) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  RETURN_IF_ERROR(QueueInodeWrites());
  Status queued = Queue(&stmt, params, /*keep=*/true);
  if (!queued.ok()) return Fail(queued);
  pending_.push_back(std::move(take));
  return Status::Ok();
}

Status PgTxn::Settle() {
  if (pending_.empty()) return Status::Ok();
  if (!failed_.ok()) return failed_;
  auto rows = Sync(/*committing=*/false);
  if (!rows.ok()) return Fail(rows.status());
  return Status::Ok();
}

Result<pg::Rows> PgTxn::Run(const Stmt& stmt, const std::vector<pg::Param>& params) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  RETURN_IF_ERROR(QueueInodeWrites());
  Status queued = Queue(&stmt, params);
  if (!queued.ok()) return Fail(queued);
  auto rows = Sync(/*committing=*/false);
  if (!rows.ok()) return Fail(rows.status());
  return rows;
}

Status PgTxn::Exec(const Stmt& stmt, const std::vector<pg::Param>& params) {
  if (!failed_.ok()) return failed_;
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  Status queued = Queue(&stmt, params);
  if (!queued.ok()) return Fail(queued);
  if (conn_->queued() >= kMaxQueued) {
    auto rows = Sync(/*committing=*/false);
    if (!rows.ok()) return Fail(rows.status());
  }
  return Status::Ok();
}

Status PgTxn::Commit() {
  if (!open_) return Status(StatusCode::kInternal, "transaction already committed");
  if (!failed_.ok()) return failed_;
  RETURN_IF_ERROR(QueueInodeWrites());
  if (!begun_) {
    open_ = false;  // nothing was sent: nothing to apply
    return Status::Ok();
  }
  // The first failure of the batch wins: a queued write's, else COMMIT's
  // own (a serialization failure found at commit, a lost connection: the
  // outcome is then unknown, as engine.h says).
  Status queued = Queue(nullptr, {});
  if (!queued.ok()) return Fail(queued);
  auto done = Sync(/*committing=*/true);
  if (!done.ok()) return Fail(done.status());
  open_ = false;
  return Status::Ok();
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
  if (!failed_.ok()) return failed_;
  const bool blocked = pgschema::InBlocks(counter);
  if (blocked) {
    if (std::optional<uint64_t> id = engine_.TakeId(counter)) return *id;
  }
  const CounterStmts& s = StmtsOf(counter);
  ASSIGN_OR_RETURN(pg::Rows rows, Run(Stmt{s.next_name.c_str(), s.next_sql.c_str()}, {}));
  const uint64_t first = rows.UInt(0, 0);
  // nextval is not undone by a rollback: the block is this engine's whatever
  // becomes of this transaction.
  if (blocked) return engine_.AddBlock(counter, first);
  return first;
}

Status PgTxn::AllowSeqScan(bool allow) {
  static constexpr Stmt kOn{"seqscan_on", "SELECT set_config('enable_seqscan', 'on', true)"};
  static constexpr Stmt kOff{"seqscan_off", "SELECT set_config('enable_seqscan', 'off', true)"};
  return Exec(allow ? kOn : kOff, {});
}

Status PgTxn::ReserveId(Counter counter, uint64_t id) {
  const CounterStmts& s = StmtsOf(counter);
  RETURN_IF_ERROR(Exec(Stmt{s.lock_name.c_str(), s.lock_sql.c_str()}, {}));
  RETURN_IF_ERROR(AllowSeqScan(true));
  RETURN_IF_ERROR(Exec(Stmt{s.reserve_name.c_str(), s.reserve_sql.c_str()}, {U(id)}));
  RETURN_IF_ERROR(AllowSeqScan(false));
  // This engine's next block comes from the raised sequence (pg_engine.h:
  // blocks other engines hold already are not affected).
  if (pgschema::InBlocks(counter)) engine_.DropBlock(counter);
  return Status::Ok();
}

}  // namespace t0fs::meta
