// OpContext: what every op handler works with: the Client, the mount's
// config, the handle tables, and the cache timeouts in wire form.
//
// Handlers (declared in ops.h, one file each) only decode arguments, call
// the Client or a File, map Status to errno and build the reply. The kernel's
// nodeid *is* the t0fs inode number (the root is 1 on both sides), so LOOKUP
// needs no table and FORGET no work; the per-inode state is that of open
// files (PassthroughTable, CachedOpens).
//
// Thread safety: shared by all workers; the tables are thread-safe, the rest
// is read-only after construction.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "fuse/mount_config.h"
#include "fuse/ops/cached_opens.h"
#include "fuse/ops/handle_table.h"
#include "fuse/ops/passthrough.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

// A seconds + nanoseconds pair as the wire wants cache timeouts.
struct WireTimeout {
  uint64_t sec = 0;
  uint32_t nsec = 0;
  static WireTimeout From(Duration d) {
    auto ms = d.value.count();
    if (ms < 0) ms = 0;
    return {uint64_t(ms / 1000), uint32_t((ms % 1000) * 1000000)};
  }
  bool zero() const { return sec == 0 && nsec == 0; }
};

// The kernel cache times replies carry: MountConfig::cache_timeout while
// the ChangeWatcher hears of every other client's change (it says until
// when, WatchedUntil) and none reached the kernel while the request was
// served (a LOOKUP answered before a create elsewhere must not cache the
// old answer long); the short configured times otherwise. An attribute or
// entry time of 0 stays 0 either way (caching off).
class CacheTimeouts {
 public:
  explicit CacheTimeouts(const MountConfig& cfg)
      : attr_(WireTimeout::From(cfg.attr_timeout)),
        entry_(WireTimeout::From(cfg.entry_timeout)),
        negative_(WireTimeout::From(cfg.negative_timeout)),
        long_(WireTimeout::From(cfg.cache_timeout)),
        long_attr_(attr_.zero() ? attr_ : long_),
        long_entry_(entry_.zero() ? entry_ : long_) {}

  // A request starts on this thread (FuseOps::Handle).
  void BeginRequest() const { t_generation = generation_.load(std::memory_order_acquire); }
  WireTimeout attr() const { return Long() ? long_attr_ : attr_; }
  // The configured (short) attribute time, whether changes are heard or not:
  // for an inode the change watcher leaves alone (CachedOpens).
  WireTimeout short_attr() const { return attr_; }
  WireTimeout negative() const { return Long() ? long_ : negative_; }
  // Entry and attribute times of one reply, decided once (READDIRPLUS
  // builds thousands of entries).
  std::pair<WireTimeout, WireTimeout> entry_and_attr() const {
    return Long() ? std::pair{long_entry_, long_attr_} : std::pair{entry_, attr_};
  }

  // The watcher: other clients' changes are known until `until`.
  void WatchedUntil(std::chrono::steady_clock::time_point until) {
    watched_until_ns_.store(until.time_since_epoch().count(), std::memory_order_release);
  }
  // The watcher, before it tells the kernel to forget something.
  void Invalidating() { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  bool Long() const {
    if (long_.zero()) return false;
    if (std::chrono::steady_clock::now().time_since_epoch().count() >=
        watched_until_ns_.load(std::memory_order_acquire)) {
      return false;
    }
    return generation_.load(std::memory_order_acquire) == t_generation;
  }

  const WireTimeout attr_, entry_, negative_, long_;
  // The long time for attributes and names, unless their own is 0: an
  // explicit --attr-timeout 0 / --entry-timeout 0 means never cached.
  const WireTimeout long_attr_, long_entry_;
  std::atomic<int64_t> watched_until_ns_{0};
  std::atomic<uint64_t> generation_{1};
  static thread_local uint64_t t_generation;  // generation_ when this thread's request began
};

// An open directory: the part of a listing fetched from the Client but not
// yet returned to the kernel, so one Client::ReadDir feeds many READDIRs.
struct DirHandle {
  explicit DirHandle(InodeId dir) : ino(dir) {}
  struct Buffer {
    client::DirPage page;
    size_t next = 0;        // first entry of page.entries not yet returned
    uint64_t position = 0;  // readdir offset at which page.entries[next] starts
    bool fetched = false;   // page holds a Client answer for `position`
  };
  const InodeId ino;
  std::mutex mu;  // guards buffer; held only to swap it in or out, never across a Client call
  Buffer buffer;
};

struct OpContext {
  OpContext(client::Client& c, const MountConfig& cfg) : client(c), config(cfg), timeouts(cfg) {}

  // Tells the kernel behind /dev/fuse fd `device` to look every cached name
  // up again at its next use (FailName in attr_convert.h says when and why).
  void ForgetCachedNames(int device);
  // Times ForgetCachedNames reached the kernel.
  uint64_t names_forgotten() const { return names_forgotten_.load(std::memory_order_relaxed); }
  // Tells the kernel behind `device` that its attributes of `ino` are out of
  // date (FUSE_NOTIFY_INVAL_INODE, attributes only: no lock is taken), so
  // that it asks GETATTR before it trusts the size again. OpOpen says when.
  void ForgetAttrs(int device, InodeId ino);
  // FUSE_NOTIFY_INVAL_INODE of `ino`'s attributes and cached pages from
  // `offset` on (negative: attributes only); false if the kernel refused it
  // (ENOENT: it holds no such inode).
  static bool InvalInode(int device, InodeId ino, int64_t offset);
  // Times ForgetAttrs reached the kernel.
  uint64_t attrs_forgotten() const { return attrs_forgotten_.load(std::memory_order_relaxed); }

  client::Client& client;
  const MountConfig config;
  CacheTimeouts timeouts;
  HandleTable<client::File> files;
  HandleTable<DirHandle> dirs;
  PassthroughTable passthrough;
  CachedOpens cached_opens;
  // Requests come through FUSE-over-io_uring queues (set once they run),
  // not /dev/fuse reads; user.t0fs.mount says which.
  std::atomic<bool> io_uring{false};

 private:
  std::atomic<uint64_t> names_forgotten_{0};
  std::atomic<uint64_t> attrs_forgotten_{0};
  std::atomic<bool> no_epoch_{false};  // the kernel refused FUSE_NOTIFY_INC_EPOCH (before 6.16)
};

}  // namespace t0fs::fuse
