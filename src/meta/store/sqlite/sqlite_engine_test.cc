// The SQLite engine's own behaviour; the contract every engine keeps is in
// engine_test/engine_contract_test.cc. Open refuses what is not a t0fs
// database or is newer than this build, checks its options, and the engine
// records the largest transaction it committed, and checkpoints its log on
// a thread of its own.
#include "meta/store/sqlite/sqlite_engine.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::TempDir;

TEST(SqliteEngine, RecordsTheLargestWrite) {
  auto engine = SqliteEngine::Open(":memory:");
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginWrite(WriteOptions{/*durable=*/true});
  ASSERT_OK(txn);
  ASSERT_OK((*txn)->PutProperty("k", "v"));
  ASSERT_OK((*txn)->PutProperty("l", "w"));
  ASSERT_OK((*txn)->Commit());
  EXPECT_EQ((*engine)->largest_write(), 2u);
}

TEST(SqliteEngine, OpenRefusesForeignAndNewerDatabases) {
  TempDir dir;
  {
    auto raw = sqlite::Db::Open(dir.File("foreign.db"), std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("CREATE TABLE t (x INTEGER)"));
  }
  EXPECT_CODE(SqliteEngine::Open(dir.File("foreign.db")), kMetaSchema);
  {
    auto raw = sqlite::Db::Open(dir.File("newer.db"), std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("PRAGMA user_version = 999"));
  }
  EXPECT_CODE(SqliteEngine::Open(dir.File("newer.db")), kMetaSchema);
  SqliteOptions bad;
  bad.sync = "sometimes";
  EXPECT_CODE(SqliteEngine::Open(dir.File("new.db"), bad), kInvalidArgument);
  SqliteOptions bad_checkpoint;
  bad_checkpoint.checkpoint = "never";
  EXPECT_CODE(SqliteEngine::Open(dir.File("new.db"), bad_checkpoint), kInvalidArgument);
}

// The log is checkpointed by the engine's own thread, not inside commits,
// and every row is there after a reopen.
TEST(SqliteEngine, CheckpointsRunOnTheirOwnThread) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  constexpr int kTxns = 3000;
  {
    auto engine = SqliteEngine::Open(path);
    ASSERT_OK(engine);
    const std::string value(3000, 'v');  // about a page per transaction
    for (int i = 0; i < kTxns; ++i) {
      auto txn = (*engine)->BeginWrite(WriteOptions{});
      ASSERT_OK(txn);
      ASSERT_OK((*txn)->PutProperty(fmt::format("k{}", i), value));
      ASSERT_OK((*txn)->Commit());
    }
    // The writes crossed the wake-up threshold a few times over: the
    // thread ran (the wait is for it to be scheduled, not a time limit).
    for (int i = 0; i < 2000 && (*engine)->background_checkpoints() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GT((*engine)->background_checkpoints(), 0u);
    EXPECT_EQ((*engine)->inline_checkpoints(), 0u);
    // Woken by frames no checkpoint copied yet, not by the log's length: a
    // few checkpoints (each transaction writes at most six pages), not one
    // per commit once the log passed the threshold.
    EXPECT_LE((*engine)->background_checkpoints(),
              uint64_t{6 * kTxns / SqliteEngine::kCheckpointFrames + 2});
  }
  auto engine = SqliteEngine::Open(path);
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginRead();
  ASSERT_OK(txn);
  for (int i : {0, kTxns / 2, kTxns - 1}) {
    auto got = (*txn)->GetProperty(fmt::format("k{}", i));
    ASSERT_OK(got);
    EXPECT_TRUE(got->has_value()) << i;
  }
}

// The log's frames are gathered per transaction (wal_vfs.h) and written at
// its commit: every committed transaction is in the file when Commit
// returns — a process killed right after (no close, no checkpoint) loses
// none — and another connection sees it at once; a transaction larger than
// what is gathered at a time (and than one write of the real file), and a
// page rewritten within one, come back whole.
TEST(SqliteEngine, CommitsAreInTheLogWhenCommitReturns) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  constexpr int kTxns = 200;
  const std::string big(6u << 20, 'b');  // spans several gathered writes
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto engine = SqliteEngine::Open(path);
    if (!engine.ok()) ::_exit(2);
    auto reader = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    if (!reader.ok()) ::_exit(3);
    for (int i = 0; i < kTxns; ++i) {
      auto txn = (*engine)->BeginWrite(WriteOptions{});
      if (!txn.ok()) ::_exit(4);
      const std::string value = i == kTxns / 2 ? big : fmt::format("v{}", i);
      if (!(*txn)->PutProperty(fmt::format("k{}", i), "first").ok()) ::_exit(5);
      if (!(*txn)->PutProperty(fmt::format("k{}", i), value).ok()) ::_exit(5);
      if (!(*txn)->Commit().ok()) ::_exit(6);
      // Another connection sees it at once.
      auto q = reader->Query(fmt::format("SELECT length(value) FROM meta WHERE key = 'k{}'", i));
      if (!q.ok()) ::_exit(7);
      auto row = (*q)->Step();
      if (!row.ok() || !*row || (*q)->Int(0) != static_cast<int64_t>(value.size())) ::_exit(8);
    }
    ::_exit(0);  // as a kill: no close, no checkpoint, nothing flushed on the way out
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's step that failed: see the exit codes above";
  auto engine = SqliteEngine::Open(path);
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginRead();
  ASSERT_OK(txn);
  for (int i = 0; i < kTxns; ++i) {
    auto got = (*txn)->GetProperty(fmt::format("k{}", i));
    ASSERT_OK(got);
    ASSERT_TRUE(got->has_value()) << i;
    EXPECT_EQ(**got, i == kTxns / 2 ? big : fmt::format("v{}", i)) << i;
  }
}

// The disk reserve: allocated next to a file database when there is room
// for several times its size, released (once) when the disk is full, taken
// again later. (tests/cli/disk_full.sh fills a real disk.)
TEST(SqliteEngine, KeepsADiskReserveNextToAFileDatabase) {
  TempDir dir;
  SqliteOptions opts;
  opts.reserve = ByteSize{1 << 20};
  {
    auto engine = SqliteEngine::Open(dir.File("meta.db"), opts);
    ASSERT_OK(engine);
    struct stat st {};
    ASSERT_EQ(::stat(dir.File("meta.db.reserve").c_str(), &st), 0);
    EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{1} << 20);
  }
  ASSERT_OK(SqliteEngine::Open(":memory:", opts));     // nothing to keep it next to
  ASSERT_OK(SqliteEngine::Open(dir.File("none.db")));  // reserve 0, the default
  EXPECT_FALSE(std::filesystem::exists(dir.File("none.db.reserve")));

  sqlite::DiskReserve reserve(dir.File("r"), 1 << 20);
  EXPECT_TRUE(reserve.Refill(/*force=*/true));
  EXPECT_TRUE(reserve.held());
  EXPECT_TRUE(reserve.Release());
  EXPECT_FALSE(std::filesystem::exists(dir.File("r")));
  EXPECT_FALSE(reserve.Release());  // nothing left to release
  EXPECT_FALSE(reserve.Refill());   // not again right after a release
  EXPECT_TRUE(reserve.Refill(true));
  // A reserve the file system cannot hold 4 times is not taken (it would
  // take the last free space itself).
  sqlite::DiskReserve huge(dir.File("huge"), uint64_t{1} << 60);
  EXPECT_FALSE(huge.Refill(true));
  EXPECT_FALSE(std::filesystem::exists(dir.File("huge")));
  sqlite::DiskReserve off(dir.File("off"), 0);
  EXPECT_FALSE(off.Refill(true));
  EXPECT_FALSE(off.Release());
}

}  // namespace
}  // namespace t0fs::meta
