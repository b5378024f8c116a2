#include "meta/store/pg/pg_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/logging.h"
#include "common/url_redact.h"
#include "meta/store/pg/pg_schema.h"
#include "meta/store/pg/pg_txn.h"

namespace t0fs::meta {
namespace {

constexpr std::array<std::string_view, 5> kSyncValues = {"off", "local", "remote_write", "on",
                                                         "remote_apply"};

// Every statement of the engine finds its rows by key. On a small table
// (replay slots, volumes, a new store's inodes) the planner prefers reading
// the whole table, and under serializable isolation that locks the whole
// table against every writer: concurrent operations then conflicted 10-40
// times as often (scripts/bench-meta-stores, docs/performance.md). Set for
// the whole session of every connection (read transactions too: a prepared
// statement's cached plan is shared by both kinds on a connection), as are
// the write transactions' idle timeout and synchronous_commit: a SET LOCAL
// in each transaction was two or three statements more for the server to
// run in every operation of ten or so.
std::string SessionSetup(const PgOptions& opts) {
  std::string sql = "SET enable_seqscan = off";
  if (opts.idle_txn_timeout.value.count() > 0) {
    sql += fmt::format("; SET idle_in_transaction_session_timeout = {}",
                       opts.idle_txn_timeout.value.count());
  }
  if (opts.synchronous_commit != "server")
    sql += fmt::format("; SET synchronous_commit = {}", opts.synchronous_commit);
  return sql;
}
}  // namespace

Result<std::unique_ptr<PgEngine>> PgEngine::Open(const std::string& url, const PgOptions& opts) {
  if (opts.pool_size == 0) {
    return Status(StatusCode::kInvalidArgument, "pg-pool-size must be at least 1");
  }
  if (opts.synchronous_commit != "server" &&
      std::find(kSyncValues.begin(), kSyncValues.end(), opts.synchronous_commit) ==
          kSyncValues.end()) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("pg-synchronous-commit must be server, off, local, remote_write, on or "
                    "remote_apply, not '{}'",
                    opts.synchronous_commit));
  }
  const std::string where = RedactUrlPassword(url);
  auto conn = pg::Connection::Open(url, opts.connect_timeout, SessionSetup(opts));
  if (!conn.ok()) return conn.status().WithContext(where);
  Status st = pgschema::Prepare(**conn, where);
  if (!st.ok()) return st;
  LOG_DEBUG("metadata store on PostgreSQL {} ({})", where, (*conn)->server());
  return std::unique_ptr<PgEngine>(new PgEngine(url, opts, std::move(conn).value()));
}

PgEngine::PgEngine(std::string url, PgOptions opts, std::unique_ptr<pg::Connection> first)
    : url_(std::move(url)), opts_(std::move(opts)) {
  begin_write_ = {"BEGIN ISOLATION LEVEL SERIALIZABLE"};
  begin_durable_ = {"BEGIN ISOLATION LEVEL SERIALIZABLE", "SET LOCAL synchronous_commit = on"};
  begin_read_ = {"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"};
  // The session's idle timeout ends a read as it ends a write (a stopped
  // server's snapshot holds up vacuum; the store retries), except a long
  // one's (a copy reads in one transaction while it writes elsewhere).
  begin_long_read_ = begin_read_;
  if (opts_.idle_txn_timeout.value.count() > 0) {
    begin_long_read_.push_back("SET LOCAL idle_in_transaction_session_timeout = 0");
  }
  idle_.push_back(std::move(first));
  open_ = 1;
}

PgEngine::~PgEngine() {
  std::lock_guard lock(mu_);
  idle_.clear();  // every transaction has ended: the engine outlives them
}

Result<std::unique_ptr<pg::Connection>> PgEngine::Acquire() {
  std::unique_ptr<pg::Connection> conn;
  {
    std::unique_lock lock(mu_);
    released_.wait(lock, [&] { return !idle_.empty() || open_ < opts_.pool_size; });
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  if (conn == nullptr) {
    auto opened = pg::Connection::Open(url_, opts_.connect_timeout, SessionSetup(opts_));
    if (!opened.ok()) {
      std::lock_guard lock(mu_);
      --open_;
      released_.notify_one();
      return opened.status();
    }
    return std::move(opened).value();
  }
  if (!conn->Alive()) {
    // Lost since its last transaction (a server restart, a failover): a
    // fresh connection, to the primary of a multi-host URL.
    Status st = conn->Reset();
    if (!st.ok()) {
      Release(std::move(conn));
      return st;
    }
  }
  return conn;
}

void PgEngine::Release(std::unique_ptr<pg::Connection> conn) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(conn));
  released_.notify_one();
}

std::map<std::string, std::string> PgEngine::PreparedStatements() {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> out;
  for (const auto& conn : idle_) out.insert(conn->prepared().begin(), conn->prepared().end());
  return out;
}

Result<std::unique_ptr<PgTxn>> PgEngine::Begin(const std::vector<std::string>& begin) {
  ASSIGN_OR_RETURN(auto conn, Acquire());
  // Nothing is sent yet: PgTxn queues these ahead of its first statement.
  return std::make_unique<PgTxn>(*this, std::move(conn), begin);
}

std::optional<uint64_t> PgEngine::TakeId(Counter counter) {
  std::lock_guard lock(ids_mu_);
  IdBlock& block = blocks_[static_cast<size_t>(counter)];
  if (block.next >= block.end) return std::nullopt;
  return block.next++;
}

void PgEngine::NoteMaybeTakenChunks(const std::vector<ChunkId>& chunks) {
  std::lock_guard lock(ids_mu_);
  for (ChunkId c : chunks) {
    if (!maybe_taken_.insert(c.value()).second) continue;
    maybe_taken_order_.push_back(c.value());
    if (maybe_taken_order_.size() > kMaybeTakenChunks) {
      maybe_taken_.erase(maybe_taken_order_.front());
      maybe_taken_order_.pop_front();
    }
  }
}

bool PgEngine::MaybeTakenChunk(ChunkId chunk) {
  std::lock_guard lock(ids_mu_);
  return maybe_taken_.count(chunk.value()) != 0;
}

uint64_t PgEngine::AddBlock(Counter counter, uint64_t first) {
  std::lock_guard lock(ids_mu_);
  IdBlock& block = blocks_[static_cast<size_t>(counter)];
  // Two threads that found the block empty at once both fetched one: keep
  // the higher, so this engine's ids keep ascending (the rest of the other
  // is never handed out; ids need not be dense).
  if (first + 1 > block.next) block = IdBlock{first + 1, first + pgschema::kIdBlock};
  return first;
}

void PgEngine::DropBlock(Counter counter) {
  std::lock_guard lock(ids_mu_);
  blocks_[static_cast<size_t>(counter)] = IdBlock{};
}

Result<std::unique_ptr<ReadTxn>> PgEngine::BeginRead(const ReadOptions& options) {
  ASSIGN_OR_RETURN(auto txn, Begin(options.long_running ? begin_long_read_ : begin_read_));
  return std::unique_ptr<ReadTxn>(std::move(txn));
}

Result<std::unique_ptr<WriteTxn>> PgEngine::BeginWrite(const WriteOptions& options) {
  ASSIGN_OR_RETURN(auto txn, Begin(options.durable ? begin_durable_ : begin_write_));
  return std::unique_ptr<WriteTxn>(std::move(txn));
}

}  // namespace t0fs::meta
