// SqliteEngine: the metadata store's Engine on one SQLite database, the
// embedded default.
//
// A file path gives a durable store (WAL journal); ":memory:" a private
// in-memory twin with identical behaviour, for tests. Open creates the schema
// of a new database and migrates an older one in place
// (docs/formats/meta-schema.md); the rows are written by the codecs of
// sqlite_rows.h.
//
// Transactions: writers BEGIN IMMEDIATE (the write lock is taken up front, so
// nothing fails with BUSY half-way), readers a deferred BEGIN (a snapshot).
// With one writer at a time every write transaction is serializable, and the
// engine never returns kTryAgain. A durable write transaction runs with
// synchronous=FULL, set before BEGIN and restored after.
//
// Thread safety: safe for concurrent use. One mutex (mu_) serialises every
// transaction, reads included, because they share the single connection and
// its statement cache; a transaction holds it from begin to end (the
// database allows one writer anyway). No other lock is taken while it is
// held.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "common/config.h"
#include "meta/store/engine.h"
#include "meta/store/sqlite/sqlite_db.h"

namespace t0fs::meta {

struct SqliteOptions {
  // "normal" or "full" (see Visit).
  std::string sync = "normal";
  ByteSize cache_size{64ull << 20};
  Duration busy_timeout{std::chrono::milliseconds(5000)};

  template <class V>
  void Visit(V& v) {
    v("sync", sync,
      "normal: commits reach disk at the next WAL checkpoint; a power loss can drop the last "
      "transactions but never corrupts, and durable Commits (fsync) are always synced. full: "
      "sync the WAL on every transaction; each metadata write then costs a device flush");
    v("cache-size", cache_size,
      "SQLite page cache for the connection; more memory, fewer reads of the database file");
    v("busy-timeout", busy_timeout,
      "how long a transaction waits for a lock held by another connection (an admin tool) "
      "before failing; longer hides stalls, shorter surfaces them as errors");
  }
};

class SqliteEngine final : public Engine {
 public:
  // Opens the database at `path` (":memory:": private, in memory), creating
  // the schema when it is new and migrating an older schema version.
  // kMetaSchema for a database that is not a t0fs store or has a schema
  // version newer than this build; kMetaDatabase when it cannot be opened.
  static Result<std::unique_ptr<SqliteEngine>> Open(const std::string& path,
                                                    const SqliteOptions& opts = {});
  ~SqliteEngine() override;

  Result<std::unique_ptr<ReadTxn>> BeginRead() override;
  Result<std::unique_ptr<WriteTxn>> BeginWrite(const WriteOptions& options) override;
  std::string_view name() const override { return "sqlite"; }

  // The most row writes (puts and deletes) one committed transaction made so
  // far: shows how large the operations' transactions get.
  uint64_t largest_write() const { return largest_write_.load(std::memory_order_relaxed); }

 private:
  friend class SqliteTxn;
  SqliteEngine(sqlite::Db db, SqliteOptions opts);
  void RecordWrite(uint64_t rows);

  std::mutex mu_;  // guards db_ (the connection and its statement cache)
  sqlite::Db db_;
  const SqliteOptions opts_;
  std::atomic<uint64_t> largest_write_{0};
};

}  // namespace t0fs::meta
