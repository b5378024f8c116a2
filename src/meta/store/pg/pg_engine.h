// PgEngine: the metadata store's Engine on PostgreSQL 15 (issue 14), shared
// by every meta server of a cluster.
//
// Open(url) connects with libpq (a URL or key=value string; several hosts
// with target_session_attrs=read-write find the primary by themselves, see
// src/pg/pg.h), creates the schema of an empty database in one transaction
// under an advisory lock (two servers starting at once create it once), and
// refuses a database that is not a t0fs store or whose schema is newer than
// this build (kMetaSchema). Like SqliteEngine it creates no row: the store
// above makes the root inode and the cluster id. The tables live in the
// connection's current schema (search_path), so one database can hold
// several stores. Layout: pg_schema.cc.
//
// Transactions take a connection from a small pool for their whole life:
//  - write: BEGIN ISOLATION LEVEL SERIALIZABLE. PostgreSQL aborts whatever
//    would break serializability (SQLSTATE 40001), deadlocks (40P01) and
//    racing inserts (23505); those, a lost connection and a read-only server
//    (a demoted primary) are kTryAgain, and the store retries the operation.
//    A lost connection is re-opened when the pool hands it out next.
//    Each sets idle_in_transaction_session_timeout (Options.idle_txn_timeout):
//    a server stopped mid-operation loses its transaction, and the row
//    locks it held, instead of holding up every other server (25P03 is
//    kTryAgain, on a new connection).
//  - read: BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY (one snapshot),
//    ended by the same idle timeout unless long-running (ReadOptions).
//  - A connection lost during COMMIT is kTryAgain too, although the commit
//    may have been applied (engine.h: the outcome is then unknown, and every
//    operation of the store bears a rerun).
//  - After any failed statement the transaction is dead: every later call
//    and Commit() return that first failure (PostgreSQL would turn COMMIT
//    into a silent ROLLBACK).
//
// Durability. Ordinary commits keep the server's synchronous_commit (its
// default `on`: a commit returns once its WAL is flushed, and with
// synchronous standbys once they have it). We do not set `off` by default:
// `off` loses the last acknowledged commits when the server crashes or a
// standby is promoted, weaker than SQLite's normal mode, which survives a
// process crash, and issue 14 requires that nothing acknowledged be lost at
// a failover. Options.synchronous_commit lets an operator trade that for
// latency. A durable write (a client's fsync) always runs with SET LOCAL
// synchronous_commit = on.
//
// Counters are sequences (nextval never repeats, across rollbacks and
// restarts). Those of every create and open (pgschema::InBlocks: inodes,
// chunks, handles, sessions, garbage rows) step by pgschema::kIdBlock: one
// nextval gives this engine a block of ids it hands out from memory, so
// NextId costs a round trip once per block; ids stay unique across the
// engines of several servers on one database, and ascend within one engine
// (not across engines). ReserveId raises a sequence with setval under a
// lock that also holds off nextval for the rest of the transaction, so no
// id at or below the reserved one can be handed out -- by blocks fetched
// after it: on a block counter it binds this engine and the blocks others
// fetch later, not a block another engine holds already. It is only used on
// those at store creation and copy (nothing else runs); nodes and volumes,
// reserved while servers run, are not in blocks and stay exact.
//
// Every connection runs with enable_seqscan off (pg_engine.cc says why:
// whole-table reads lock the whole table under serializable isolation),
// set once for its session with the write transactions' idle timeout and
// synchronous_commit (pg::Connection's setup, again after a reconnect).
//
// Cost (PgTxn, pipeline mode): BEGIN is queued with the first statement,
// writes are queued, each read is one round trip carrying the writes before
// it, COMMIT one; prefetch hints (engine.h) are queued and come back with
// the next read; the ROLLBACK that ends a read transaction is not waited
// for. Statements are prepared once per connection, in the same batch as
// their first use. Full scans page by key (pgrows::kScanPage rows a
// statement), so memory stays bounded on large stores.
//
// Thread safety: safe for concurrent use. mu_ guards the pool; it is never
// held while talking to the server. A transaction owns its connection.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/config.h"
#include "meta/store/engine.h"
#include "meta/store/pg/pg_options.h"
#include "pg/pg.h"

namespace t0fs::meta {

class PgTxn;

class PgEngine final : public Engine {
 public:
  // Connects to `url` and prepares the schema (see the header comment).
  // kMetaSchema: not a t0fs store, or a newer schema. kTryAgain: the server
  // is unreachable or read-only. kInvalidArgument: bad options.
  static Result<std::unique_ptr<PgEngine>> Open(const std::string& url, const PgOptions& opts = {});
  ~PgEngine() override;

  Result<std::unique_ptr<ReadTxn>> BeginRead(const ReadOptions& options = {}) override;
  Result<std::unique_ptr<WriteTxn>> BeginWrite(const WriteOptions& options) override;
  std::string_view name() const override { return "postgresql"; }
  // Round trips the transactions of this engine waited for (each read that
  // waits, each commit; a prefetch rides with the next read).
  uint64_t round_trips() const { return round_trips_.load(std::memory_order_relaxed); }
  // Statements they sent (BEGIN, COMMIT and the transaction's SETs included).
  uint64_t statements() const { return statements_.load(std::memory_order_relaxed); }
  // The statements prepared on the idle connections (name -> text): what
  // the transactions so far have used, for tests of their plans.
  std::map<std::string, std::string> PreparedStatements();

 private:
  friend class PgTxn;
  PgEngine(std::string url, PgOptions opts, std::unique_ptr<pg::Connection> first);

  // A connection for a new transaction (opened or re-opened as needed);
  // waits while all pool_size are in use.
  Result<std::unique_ptr<pg::Connection>> Acquire();
  void Release(std::unique_ptr<pg::Connection> conn);
  // A transaction that starts with `begin` (one of the lists below).
  Result<std::unique_ptr<PgTxn>> Begin(const std::vector<std::string>& begin);

  // The id blocks of pgschema::InBlocks counters (see the header comment).
  // TakeId: the next id of `counter`'s block, none when it is used up.
  // AddBlock: a block fetched from the sequence (first .. first+kIdBlock-1);
  // returns `first`, keeps the rest. DropBlock: forget the block (ReserveId).
  std::optional<uint64_t> TakeId(Counter counter);
  uint64_t AddBlock(Counter counter, uint64_t first);
  void DropBlock(Counter counter);
  // Chunk ids a transaction inserted without waiting for the answer
  // (InsertChunkIfFree) and that then failed: one of them may be taken, so
  // the retry's InsertChunkIfFree of them asks and waits. The latest
  // kMaybeTakenChunks are kept.
  void NoteMaybeTakenChunks(const std::vector<ChunkId>& chunks);
  bool MaybeTakenChunk(ChunkId chunk);
  static constexpr size_t kMaybeTakenChunks = 4096;

  struct IdBlock {
    uint64_t next = 0;  // ids next .. end-1 are this engine's to hand out
    uint64_t end = 0;
  };

  const std::string url_;
  const PgOptions opts_;
  std::vector<std::string> begin_write_;  // the statements that begin an ordinary write transaction
  std::vector<std::string> begin_durable_;  // those of a durable one (a client's fsync)
  std::vector<std::string> begin_read_;     // those of a read transaction
  std::vector<std::string> begin_long_read_;  // of a long-running one (ReadOptions)

  std::mutex ids_mu_;              // guards blocks_; never held while talking to the server
  std::array<IdBlock, 7> blocks_;  // by Counter
  std::deque<uint64_t> maybe_taken_order_;    // guarded by ids_mu_, oldest first
  std::unordered_set<uint64_t> maybe_taken_;  // guarded by ids_mu_

  std::mutex mu_;  // guards idle_ and open_
  std::condition_variable released_;
  std::vector<std::unique_ptr<pg::Connection>> idle_;
  uint32_t open_ = 0;  // connections in idle_ or owned by a transaction
  std::atomic<uint64_t> round_trips_{0};
  std::atomic<uint64_t> statements_{0};
};

}  // namespace t0fs::meta
