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
// engine returns kTryAgain only after releasing its disk reserve (below). A durable write
// transaction runs with synchronous=FULL, set before BEGIN and restored after.
//
// WAL checkpoints (copying the log's pages into the database file, then
// restarting the log) run on a thread of their own with its own connection
// (checkpoint = "background", the default for a file): SQLite's automatic
// checkpoint runs inside the commit that crosses its threshold, holding the
// one connection, so every request queued behind it waited the few
// milliseconds of ~1000 page writes and two syncs. A commit that leaves
// kCheckpointFrames or more in the log *that no checkpoint has copied yet*
// wakes the thread (counting every frame of the log instead woke it after
// nearly every commit of a busy store, since a passive checkpoint rarely
// catches up with writers that go on appending: two fdatasyncs and a read
// of the new frames per metadata operation); one that finds kInlineFrames
// (the thread cannot keep up, or the log never emptied under a steady load)
// checkpoints itself, as SQLite would, and the next writer starts the log
// over. "inline" keeps SQLite's own automatic checkpoint.
//
// A full disk: SQLITE_FULL is kNoSpace (ENOSPC to clients). A file DB keeps
// `reserve` bytes in DB.reserve (DiskReserve); a write transaction whose
// commit finds the disk full releases it and answers kTryAgain, so the
// operation runs again (PosixStore::Retry) with room; the reserve is taken
// again at a later write once the file system has room.
//
// Thread safety: safe for concurrent use. One mutex (mu_) serialises every
// transaction, reads included, because they share the single connection and
// its statement cache; a transaction holds it from begin to end (the
// database allows one writer anyway). No other lock is taken while it is
// held, except ckpt_mu_ (briefly, to wake the checkpoint thread).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/config.h"
#include "meta/store/engine.h"
#include "meta/store/sqlite/disk_reserve.h"
#include "meta/store/sqlite/sqlite_db.h"

namespace t0fs::meta {

struct SqliteOptions {
  // "normal" or "full" (see Visit).
  std::string sync = "normal";
  ByteSize cache_size{64ull << 20};
  Duration busy_timeout{std::chrono::milliseconds(5000)};
  // "background" or "inline" (see Visit).
  std::string checkpoint = "background";
  ByteSize reserve{0};  // the meta server's sqlite-reserve; none for tools and tests

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
    v("checkpoint", checkpoint,
      "background: WAL checkpoints (copying the log into the database file) run on a thread of "
      "their own, off the requests' path; inline: SQLite's automatic checkpoint, inside the "
      "commit that fills the log (that request, and those queued behind it, wait for it)");
    v("reserve", reserve,
      "disk space kept back in a file next to the database (DB.reserve) and released when the "
      "disk is full, so that metadata writes, the deletions that free space among them, go on; "
      "taken again once 4x its size is free. 0: none (the default here; meta's sqlite-reserve)");
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

  Result<std::unique_ptr<ReadTxn>> BeginRead(const ReadOptions& options = {}) override;
  Result<std::unique_ptr<WriteTxn>> BeginWrite(const WriteOptions& options) override;
  std::string_view name() const override { return "sqlite"; }

  // The most row writes (puts and deletes) one committed transaction made so
  // far: shows how large the operations' transactions get.
  uint64_t largest_write() const { return largest_write_.load(std::memory_order_relaxed); }
  // Checkpoints run so far by the checkpoint thread, and inside commits
  // (the log reached kInlineFrames, or checkpoint = "inline" is not counted).
  uint64_t background_checkpoints() const { return background_checkpoints_.load(); }
  uint64_t inline_checkpoints() const { return inline_checkpoints_.load(); }

  // Log frames (pages) that wake the checkpoint thread; and that make a
  // commit checkpoint itself (about 64 MiB of log with 4 KiB pages).
  static constexpr int kCheckpointFrames = 1000;
  static constexpr int kInlineFrames = 16000;

 private:
  friend class SqliteTxn;
  SqliteEngine(sqlite::Db db, SqliteOptions opts, const std::string& path);
  void RecordWrite(uint64_t rows);
  // Starts the checkpoint thread on its own connection `ckpt`.
  void StartCheckpoints(sqlite::Db ckpt);
  void RunCheckpoints();
  // sqlite3_wal_hook: after each commit, with the frames now in the log.
  static int OnCommit(void* engine, ::sqlite3* db, const char* schema, int frames);

  // The disk is full: releases the reserve (under mu_). True if there was
  // one to release: the transaction may run again.
  bool ReleaseReserve() { return reserve_.Release(); }

  std::mutex mu_;  // guards db_ (the connection and its statement cache) and reserve_
  sqlite::Db db_;
  const SqliteOptions opts_;
  sqlite::DiskReserve reserve_;  // none for ":memory:" or reserve = 0
  std::atomic<uint64_t> largest_write_{0};

  std::mutex ckpt_mu_;  // guards ckpt_due_ and ckpt_stop_
  std::condition_variable ckpt_cv_;
  bool ckpt_due_ = false;
  bool ckpt_stop_ = false;
  std::optional<sqlite::Db> ckpt_db_;  // the checkpoint thread's connection
  std::thread ckpt_thread_;
  std::atomic<uint64_t> background_checkpoints_{0}, inline_checkpoints_{0};
  // Frames of the log the last checkpoint had copied, and the log's length
  // at the last commit (guarded by mu_; shorter now: the log started over).
  std::atomic<int> copied_frames_{0};
  int log_frames_ = 0;
};

}  // namespace t0fs::meta
