// The wal-index locks of the "t0fs-wal" VFS (shm_locks.h): decided in
// memory between the connections of this process; other processes kept out
// while it maps the wal-index, unless one was there first.
#include "meta/store/sqlite/shm_locks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "meta/store/sqlite/sqlite_engine.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using sqlite::ShmLocks;
using testing::TempDir;

constexpr int kShared = SQLITE_SHM_LOCK | SQLITE_SHM_SHARED;
constexpr int kExclusive = SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE;
constexpr int kUnshare = SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED;
constexpr int kUnexclude = SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE;

TEST(ShmLocks, FollowSqlitesRulesBetweenConnections) {
  ShmLocks locks;
  int a = 0, b = 0;  // two connections
  // Shared with shared; a shared lock held is granted again.
  EXPECT_EQ(locks.Lock(&a, 3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kShared), SQLITE_OK);
  // Exclusive against another's shared, on any slot of the range.
  EXPECT_EQ(locks.Lock(&a, 2, 3, kExclusive), SQLITE_BUSY);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kUnshare), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kExclusive), SQLITE_BUSY);  // a still shares it
  EXPECT_EQ(locks.Lock(&a, 3, 1, kUnshare), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kExclusive), SQLITE_OK);
  // Anything against another's exclusive; the rest of the slots stay free.
  EXPECT_EQ(locks.Lock(&a, 3, 1, kShared), SQLITE_BUSY);
  EXPECT_EQ(locks.Lock(&a, 0, 8, kExclusive), SQLITE_BUSY);
  EXPECT_EQ(locks.Lock(&a, 0, 3, kExclusive), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&a, 4, 4, kShared), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 0, 1, kShared), SQLITE_BUSY);
  // An unlock releases; forgetting a connection releases all it holds.
  EXPECT_EQ(locks.Lock(&b, 3, 1, kUnexclude), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 3, 1, kUnexclude), SQLITE_OK);  // nothing held: fine
  EXPECT_EQ(locks.Lock(&b, 3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 4, 1, kExclusive), SQLITE_BUSY);
  locks.Forget(&a);
  EXPECT_EQ(locks.Lock(&b, 4, 1, kExclusive), SQLITE_OK);
  EXPECT_EQ(locks.Lock(&b, 0, 3, kExclusive), SQLITE_OK);
  // Bad arguments.
  EXPECT_EQ(locks.Lock(&a, 7, 2, kShared), SQLITE_MISUSE);
  EXPECT_EQ(locks.Lock(&a, -1, 1, kShared), SQLITE_MISUSE);
  EXPECT_EQ(locks.Lock(&a, 0, 0, kShared), SQLITE_MISUSE);
  EXPECT_EQ(locks.Lock(&a, 0, 1, SQLITE_SHM_LOCK | SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED),
            SQLITE_MISUSE);
  EXPECT_EQ(locks.Lock(&a, 0, 1, SQLITE_SHM_LOCK), SQLITE_MISUSE);
}

// What another process's SQLite meets when it takes a read lock on a slot
// of the wal-index (as it does to read): true when the lock is free.
bool SlotFreeForAnotherProcess(const std::string& db, int slot) {
  int fd = ::open((db + "-shm").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;  // no wal-index: nothing held
  struct flock probe {};
  probe.l_type = F_RDLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 120 + slot;  // UNIX_SHM_BASE
  probe.l_len = 1;
  // An open-file-description lock of its own (a POSIX lock of this process
  // would not see this process's other POSIX locks).
  const bool free = ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type == F_UNLCK;
  ::close(fd);
  return free;
}

void PutAndCheck(SqliteEngine& engine, const std::string& key) {
  {
    auto txn = engine.BeginWrite(WriteOptions{});  // one transaction at a time
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty(key, "v"));
    ASSERT_OK((*txn)->Commit());
  }
  auto read = engine.BeginRead();
  ASSERT_OK(read);
  auto got = (*read)->GetProperty(key);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), "v");
}

// While an engine has the database open, every lock slot of its wal-index
// is taken for other processes (their SQLite answers "locking protocol"
// after its ten seconds of retries); the engine's own connections (the
// checkpoint thread's too) work on; closed, the slots are free again.
TEST(ShmLocks, AnOpenEngineKeepsOtherProcessesOut) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  {
    auto engine = SqliteEngine::Open(path);
    ASSERT_OK(engine);
    for (int i = 0; i < 2000; ++i) PutAndCheck(**engine, fmt::format("k{}", i));  // checkpoints run
    for (int slot = 0; slot < ShmLocks::kSlots; ++slot) {
      EXPECT_FALSE(SlotFreeForAnotherProcess(path, slot)) << slot;
    }
  }
  for (int slot = 0; slot < ShmLocks::kSlots; ++slot) {
    EXPECT_TRUE(SlotFreeForAnotherProcess(path, slot)) << slot;
  }
  auto engine = SqliteEngine::Open(path);
  ASSERT_OK(engine);
  auto read = (*engine)->BeginRead();
  ASSERT_OK(read);
  auto got = (*read)->GetProperty("k1999");
  ASSERT_OK(got);
  EXPECT_TRUE(got->has_value());
}

// Another process already reading when the engine opens: the engine cannot
// keep it out, so its locks stay SQLite's (fcntl), and both work.
TEST(ShmLocks, AProcessAlreadyReadingSharesTheDatabase) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  const std::string ready = dir.File("ready"), go = dir.File("go");
  {
    auto engine = SqliteEngine::Open(path);
    ASSERT_OK(engine);
    PutAndCheck(**engine, "before");
  }
  // The sqlite3 shell in a read transaction until `go` exists.
  const std::string shell = fmt::format(
      "sqlite3 '{}' 'BEGIN' \"SELECT value FROM meta WHERE key = 'before'\" "
      "'.shell touch {}; while [ ! -e {} ]; do sleep 0.01; done' 'COMMIT' 2>&1",
      path, ready, go);
  FILE* other = ::popen(shell.c_str(), "r");
  ASSERT_NE(other, nullptr);
  while (!std::filesystem::exists(ready)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    auto engine = SqliteEngine::Open(path);
    ASSERT_OK(engine);
    PutAndCheck(**engine, "during");
    EXPECT_TRUE(SlotFreeForAnotherProcess(path, 0));  // the writer's slot, free again
    ::close(::open(go.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    char line[256] = {};
    ASSERT_NE(std::fgets(line, sizeof line, other), nullptr);
    EXPECT_EQ(std::string(line), "v\n");
    EXPECT_EQ(::pclose(other), 0);
    PutAndCheck(**engine, "after");
  }
}

}  // namespace
}  // namespace t0fs::meta
