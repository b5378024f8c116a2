// ShmLocks: the locks of a WAL database's shared memory (the wal-index) as
// the connections of one process hold them, kept in memory.
//
// SQLite's unix VFS takes every wal-index lock with fcntl(2) as well as in
// memory: a write transaction of the metadata store took six (a read mark
// exclusive, then shared; the writer lock; their releases), a read
// transaction two — more than a third of the system calls of a metadata
// operation. Those fcntl calls only keep other processes out; between the
// connections of one process SQLite decides in memory. The "t0fs-wal" VFS
// (wal_vfs.h) decides here instead, with SQLite's rules, and keeps other
// processes out as a whole: one lock over all the lock bytes of the -shm
// file while this process maps it (wal_vfs.cc).
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace t0fs::meta::sqlite {

class ShmLocks {
 public:
  static constexpr int kSlots = 8;  // SQLITE_SHM_NLOCK

  // SQLite's xShmLock, for the connection `owner`: `flags` is SQLITE_SHM_LOCK
  // or SQLITE_SHM_UNLOCK with SQLITE_SHM_SHARED or SQLITE_SHM_EXCLUSIVE, on
  // slots [ofst, ofst + n). SQLITE_OK, or SQLITE_BUSY when another connection
  // holds a lock in the way (an exclusive lock for a shared one; any lock for
  // an exclusive one). A shared lock `owner` already holds is granted again;
  // an unlock releases both kinds. Bad arguments: SQLITE_MISUSE.
  int Lock(const void* owner, int ofst, int n, int flags);

  // Releases everything `owner` holds (its wal-index unmapped).
  void Forget(const void* owner);

 private:
  struct Held {
    uint8_t shared = 0;  // one bit per slot
    uint8_t exclusive = 0;
  };
  std::mutex mu_;
  std::unordered_map<const void*, Held> held_;  // by connection; a few
};

}  // namespace t0fs::meta::sqlite
