#include "meta/store/sqlite/wal_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "meta/store/sqlite/shm_locks.h"

namespace t0fs::meta::sqlite {
namespace {

constexpr int kFrameHeader = 24;           // WAL_FRAME_HDRSIZE
constexpr size_t kMaxGathered = 4u << 20;  // written out before it grows past this
constexpr size_t kMaxWrite = 64u << 10;    // per write of the real file
constexpr const char* kName = "t0fs-wal";

sqlite3_vfs* g_real = nullptr;  // the default (unix) VFS

// What a connection's log file has gathered and not yet written.
struct Gathered {
  std::mutex mu;
  sqlite3_file* real = nullptr;
  std::vector<char> bytes;
  sqlite3_int64 start = 0;        // file offset of bytes[0]
  sqlite3_int64 next = 0;         // where the log's next frame goes (past the last one written)
  bool commit_page_next = false;  // the last write was a commit frame's header

  // Under mu.
  int FlushLocked() {
    int rc = SQLITE_OK;
    // In pieces: the unix VFS writes at most 128 KiB - 1 per call (and
    // nothing at all for exactly 128 KiB).
    for (size_t done = 0; done < bytes.size() && rc == SQLITE_OK; done += kMaxWrite) {
      const size_t n = std::min(kMaxWrite, bytes.size() - done);
      rc = real->pMethods->xWrite(real, bytes.data() + done, static_cast<int>(n),
                                  start + static_cast<sqlite3_int64>(done));
    }
    bytes.clear();
    return rc;
  }
  int Flush() {
    std::lock_guard lock(mu);
    return FlushLocked();
  }
};

// The log files open in this process under one path, so that a database
// file's barrier finds the frames of every connection to its log. Found by
// path once, at open; the barrier then takes only this list's lock.
struct Logs {
  std::string path;  // the log's
  std::mutex mu;
  std::vector<Gathered*> open;  // under mu
  int users = 0;                // files (database or log) that hold it; under g_logs_mu
};
std::mutex g_logs_mu;
std::unordered_map<std::string, Logs*> g_logs;

Logs* UseLogs(const std::string& log_path) {
  std::lock_guard lock(g_logs_mu);
  Logs*& logs = g_logs[log_path];
  if (logs == nullptr) {
    logs = new Logs;
    logs->path = log_path;
  }
  logs->users++;
  return logs;
}
void ReleaseLogs(Logs* logs) {
  std::lock_guard lock(g_logs_mu);
  if (--logs->users > 0) return;
  g_logs.erase(logs->path);
  delete logs;
}

// The wal-index of one database file as this process's connections map it
// (shm_locks.h). While one of them maps it, `guard` — the -shm file opened
// once more — holds an open-file-description write lock on the eight lock
// slots of SQLite's unix VFS in that file (the bytes from UNIX_SHM_BASE,
// 120), so that another process's SQLite finds each of them taken and
// leaves the database alone; the connections here then lock
// in memory only. If another process holds one of them when the first
// connection here maps the wal-index, the locks stay SQLite's own.
struct Shm {
  std::pair<dev_t, ino_t> key;
  int users = 0;      // connections attached; under g_shm_mu
  int guard = -1;     // closed only once SQLite has closed its own descriptor
  bool ours = false;  // fixed at creation
  ShmLocks locks;
};
constexpr off_t kShmLockBase = 120;  // UNIX_SHM_BASE in SQLite's os_unix.c
std::mutex g_shm_mu;
std::map<std::pair<dev_t, ino_t>, Shm*> g_shm;

struct File {
  sqlite3_file base;
  sqlite3_file* real;
  Gathered* log;     // a log file's (else null)
  Logs* logs;        // a log file's own list; a database file's log's (else null)
  const char* name;  // a database file's (SQLite keeps it until xClose), else null
  Shm* shm;          // once the database file's wal-index is used
};

File* Of(sqlite3_file* f) {
  return reinterpret_cast<File*>(f);
}
sqlite3_file* Real(sqlite3_file* f) {
  return Of(f)->real;
}

void FlushLogs(Logs& logs) {
  std::lock_guard lock(logs.mu);
  for (Gathered* g : logs.open) {
    int rc = g->Flush();
    // Not expected: every commit wrote its frames at its commit frame.
    if (rc != SQLITE_OK) {
      LOG_ERROR("metadata store: writing gathered frames to {}: {}", logs.path, sqlite3_errstr(rc));
    }
  }
}

// ---- the real file's methods, called with the same arguments ----

template <auto Method, typename... Args>
int Forward(sqlite3_file* f, Args... args) {
  return (Real(f)->pMethods->*Method)(Real(f), args...);
}
// A log file's: what it gathered is written first.
template <auto Method, typename... Args>
int FlushThenForward(sqlite3_file* f, Args... args) {
  int rc = Of(f)->log->Flush();
  return rc != SQLITE_OK ? rc : Forward<Method, Args...>(f, args...);
}

// ---- a database file's wal-index ----

// The wal-index state of the database `file`, attached on its first use;
// null when it has none to share (a file with no name).
Shm* AttachShm(File* file) {
  if (file->shm != nullptr || file->name == nullptr) return file->shm;
  struct stat st {};
  if (::stat(file->name, &st) != 0) return nullptr;
  std::lock_guard lock(g_shm_mu);
  Shm*& shm = g_shm[{st.st_dev, st.st_ino}];
  if (shm == nullptr) {
    shm = new Shm;
    shm->key = {st.st_dev, st.st_ino};
    // Opened before SQLite opens its own descriptor (which holds the POSIX
    // locks of this process on the file) and closed after it: closing any
    // descriptor of a file drops all of them.
    const std::string path = std::string(file->name) + "-shm";
    shm->guard = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777);
    struct flock all {};
    all.l_type = F_WRLCK;
    all.l_whence = SEEK_SET;
    all.l_start = kShmLockBase;
    all.l_len = ShmLocks::kSlots;
    shm->ours = shm->guard >= 0 && ::fcntl(shm->guard, F_OFD_SETLK, &all) == 0;
    if (!shm->ours) {
      LOG_INFO("metadata store: another process uses {}; its locks stay SQLite's ({})", path,
               std::strerror(errno));
    }
  }
  shm->users++;
  file->shm = shm;
  return shm;
}

// After SQLite unmapped the wal-index of `file` (or closed it).
void DetachShm(File* file) {
  Shm* shm = file->shm;
  if (shm == nullptr) return;
  file->shm = nullptr;
  std::lock_guard lock(g_shm_mu);
  shm->locks.Forget(file);
  if (--shm->users > 0) return;
  if (shm->guard >= 0) ::close(shm->guard);
  g_shm.erase(shm->key);
  delete shm;
}

int PlainShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  AttachShm(Of(f));
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int PlainShmLock(sqlite3_file* f, int ofst, int n, int flags) {
  Shm* shm = AttachShm(Of(f));
  if (shm != nullptr && shm->ours) return shm->locks.Lock(f, ofst, n, flags);
  return Real(f)->pMethods->xShmLock(Real(f), ofst, n, flags);
}
int PlainShmUnmap(sqlite3_file* f, int delete_flag) {
  int rc = Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
  DetachShm(Of(f));
  return rc;
}

// ---- a database (or any other) file: as the real one, but its barrier
// writes out its log's gathered frames first, and its wal-index locks are
// the Shm's ----

int PlainClose(sqlite3_file* f) {
  int rc = Real(f)->pMethods->xClose(Real(f));
  DetachShm(Of(f));
  if (Of(f)->logs != nullptr) ReleaseLogs(Of(f)->logs);
  return rc;
}
void PlainShmBarrier(sqlite3_file* f) {
  if (Of(f)->logs != nullptr) FlushLogs(*Of(f)->logs);
  Real(f)->pMethods->xShmBarrier(Real(f));
}

// ---- a log file: writes gathered ----

int LogClose(sqlite3_file* f) {
  File* file = Of(f);
  int flushed = file->log->Flush();
  {
    std::lock_guard lock(file->logs->mu);
    auto& open = file->logs->open;
    open.erase(std::remove(open.begin(), open.end(), file->log), open.end());
  }
  ReleaseLogs(file->logs);
  delete file->log;
  int rc = file->real->pMethods->xClose(file->real);
  return flushed != SQLITE_OK ? flushed : rc;
}
int LogWrite(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 offset) {
  Gathered& g = *Of(f)->log;
  std::lock_guard lock(g.mu);
  const auto* bytes = static_cast<const char*>(buf);
  const sqlite3_int64 end = g.start + static_cast<sqlite3_int64>(g.bytes.size());
  if (offset == 0) g.next = 0;  // the log's header: a new log starts
  if (offset != g.next) {
    g.commit_page_next = false;
    if (!g.bytes.empty() && offset >= g.start && offset + amt <= end) {
      // A page of this transaction written again (SQLite rewrites in place
      // a page it wrote earlier in the same transaction).
      std::memcpy(g.bytes.data() + (offset - g.start), bytes, static_cast<size_t>(amt));
      return SQLITE_OK;
    }
    // Anything else not at the log's end (checksums rewritten, a log
    // another connection wrote last): through at once, in order.
    int rc = g.FlushLocked();
    if (rc == SQLITE_OK) rc = g.real->pMethods->xWrite(g.real, buf, amt, offset);
    if (offset + amt > g.next) g.next = offset + amt;
    return rc;
  }
  // The log's next frame (or its header).
  if (!g.bytes.empty() &&
      (offset != end || g.bytes.size() + static_cast<size_t>(amt) > kMaxGathered)) {
    int rc = g.FlushLocked();
    if (rc != SQLITE_OK) return rc;
  }
  if (g.bytes.empty()) g.start = offset;
  g.bytes.insert(g.bytes.end(), bytes, bytes + amt);
  g.next = offset + amt;
  if (g.commit_page_next) {
    // The commit frame's page: the transaction is whole; its result is the
    // write's (a full disk fails the COMMIT).
    g.commit_page_next = false;
    return g.FlushLocked();
  }
  // A frame header: bytes 4..7 are the database size after a commit, 0 in
  // every other frame.
  if (amt == kFrameHeader) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes);
    g.commit_page_next = (b[4] | b[5] | b[6] | b[7]) != 0;
  }
  return SQLITE_OK;
}
sqlite3_io_methods g_plain_methods;
sqlite3_io_methods g_log_methods;

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  (void)vfs;
  File* file = Of(f);
  file->base.pMethods = nullptr;
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  file->log = nullptr;
  file->logs = nullptr;
  file->name = nullptr;
  file->shm = nullptr;
  int rc = g_real->xOpen(g_real, name, file->real, flags, out_flags);
  if (file->real->pMethods == nullptr) return rc;  // nothing to close
  // Our methods are version 3 (shared memory, memory mapping), as the unix
  // VFS's have been since SQLite 3.7.17.
  if ((flags & SQLITE_OPEN_WAL) != 0 && name != nullptr) {
    file->log = new Gathered;
    file->log->real = file->real;
    file->log->bytes.reserve(256u << 10);
    file->logs = UseLogs(name);
    std::lock_guard lock(file->logs->mu);
    file->logs->open.push_back(file->log);
    file->base.pMethods = &g_log_methods;
  } else {
    if ((flags & SQLITE_OPEN_MAIN_DB) != 0 && name != nullptr) {
      file->logs = UseLogs(std::string(name) + "-wal");
      file->name = name;
    }
    file->base.pMethods = &g_plain_methods;
  }
  return rc;
}

sqlite3_vfs g_vfs;

void Register() {
  g_real = sqlite3_vfs_find(nullptr);
  if (g_real == nullptr) return;
  using M = sqlite3_io_methods;
  using Offset = sqlite3_int64;
  g_plain_methods = M{3,
                      PlainClose,
                      Forward<&M::xRead, void*, int, Offset>,
                      Forward<&M::xWrite, const void*, int, Offset>,
                      Forward<&M::xTruncate, Offset>,
                      Forward<&M::xSync, int>,
                      Forward<&M::xFileSize, Offset*>,
                      Forward<&M::xLock, int>,
                      Forward<&M::xUnlock, int>,
                      Forward<&M::xCheckReservedLock, int*>,
                      Forward<&M::xFileControl, int, void*>,
                      Forward<&M::xSectorSize>,
                      Forward<&M::xDeviceCharacteristics>,
                      PlainShmMap,
                      PlainShmLock,
                      PlainShmBarrier,
                      PlainShmUnmap,
                      Forward<&M::xFetch, Offset, int, void**>,
                      Forward<&M::xUnfetch, Offset, void*>};
  // A log file: reads, syncs, sizes, truncations, file controls and
  // mappings write what is gathered first.
  g_log_methods = g_plain_methods;
  g_log_methods.xClose = LogClose;
  g_log_methods.xRead = FlushThenForward<&M::xRead, void*, int, Offset>;
  g_log_methods.xWrite = LogWrite;
  g_log_methods.xTruncate = FlushThenForward<&M::xTruncate, Offset>;
  g_log_methods.xSync = FlushThenForward<&M::xSync, int>;
  g_log_methods.xFileSize = FlushThenForward<&M::xFileSize, Offset*>;
  g_log_methods.xFileControl = FlushThenForward<&M::xFileControl, int, void*>;
  g_log_methods.xFetch = FlushThenForward<&M::xFetch, Offset, int, void**>;
  g_vfs = *g_real;
  g_vfs.iVersion = std::min(g_real->iVersion, 3);
  g_vfs.szOsFile = static_cast<int>(sizeof(File)) + g_real->szOsFile;
  g_vfs.pNext = nullptr;
  g_vfs.zName = kName;
  g_vfs.pAppData = nullptr;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = [](sqlite3_vfs*, const char* name, int sync_dir) {
    return g_real->xDelete(g_real, name, sync_dir);
  };
  g_vfs.xAccess = [](sqlite3_vfs*, const char* name, int flags, int* out) {
    return g_real->xAccess(g_real, name, flags, out);
  };
  g_vfs.xFullPathname = [](sqlite3_vfs*, const char* name, int n, char* out) {
    return g_real->xFullPathname(g_real, name, n, out);
  };
  g_vfs.xDlOpen = [](sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); };
  g_vfs.xDlError = [](sqlite3_vfs*, int n, char* out) { g_real->xDlError(g_real, n, out); };
  g_vfs.xDlSym = [](sqlite3_vfs*, void* handle, const char* symbol) {
    return g_real->xDlSym(g_real, handle, symbol);
  };
  g_vfs.xDlClose = [](sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); };
  g_vfs.xRandomness = [](sqlite3_vfs*, int n, char* out) {
    return g_real->xRandomness(g_real, n, out);
  };
  g_vfs.xSleep = [](sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); };
  g_vfs.xCurrentTime = [](sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); };
  g_vfs.xGetLastError = [](sqlite3_vfs*, int n, char* out) {
    return g_real->xGetLastError(g_real, n, out);
  };
  g_vfs.xCurrentTimeInt64 = [](sqlite3_vfs*, sqlite3_int64* out) {
    return g_real->xCurrentTimeInt64(g_real, out);
  };
  g_vfs.xSetSystemCall = [](sqlite3_vfs*, const char* name, sqlite3_syscall_ptr call) {
    return g_real->xSetSystemCall(g_real, name, call);
  };
  g_vfs.xGetSystemCall = [](sqlite3_vfs*, const char* name) {
    return g_real->xGetSystemCall(g_real, name);
  };
  g_vfs.xNextSystemCall = [](sqlite3_vfs*, const char* name) {
    return g_real->xNextSystemCall(g_real, name);
  };
  if (int rc = sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0); rc != SQLITE_OK) {
    LOG_WARN("metadata store: registering the {} VFS: {}", kName, sqlite3_errstr(rc));
    g_real = nullptr;
  }
}

}  // namespace

const char* WalVfsName() {
  static std::once_flag once;
  std::call_once(once, Register);
  return g_real != nullptr ? kName : nullptr;
}

}  // namespace t0fs::meta::sqlite
