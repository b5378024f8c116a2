// ChangeWatcher: keeps a mount's kernel caches true to other clients'
// changes, so that names and attributes may be cached long
// (MountConfig::cache_timeout) instead of a second.
//
// A thread asks the Client what other clients changed (Client::PollChanges:
// every meta server, a long poll that a server answers at the next change,
// or after four intervals; asked again one interval after each answer)
// and tells the kernel to forget
// each changed name (FUSE_NOTIFY_INVAL_ENTRY, the negative entry of a name
// created elsewhere too) and each changed inode's attributes and cached
// pages (FUSE_NOTIFY_INVAL_INODE). A complete poll lets replies carry the
// long cache time for a few intervals (CacheTimeouts::WatchedUntil); a poll
// that fails or reports lost changes ends that at once.
//
// Every notification is sent twice, one interval apart: a LOOKUP answered
// by meta just before a change, whose reply reaches the kernel just after
// the first notification, would otherwise stay cached. An inode open on
// this mount through the page cache is not notified while it is
// (CachedOpens says why); its last close does it.
//
// The thread is its own, never a request's: a notification waits for the
// directory's lock, which the caller of a request being served may hold.
//
// Thread safety: Stop and the accessors from any thread.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "common/config.h"
#include "fuse/ops/op_context.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

class ChangeWatcher {
 public:
  // Starts watching for the mount whose /dev/fuse fd is `device`; an inode
  // open in `opens` is left alone until its last close (cached_opens.h).
  ChangeWatcher(client::Client& client, int device, Duration interval, CacheTimeouts& timeouts,
                CachedOpens& opens);
  ~ChangeWatcher();
  ChangeWatcher(const ChangeWatcher&) = delete;
  ChangeWatcher& operator=(const ChangeWatcher&) = delete;

  // Joins the thread; no notification is written after it returns.
  void Stop();
  // Notifications the kernel took (it ignores those of names and inodes it
  // does not cache).
  uint64_t invalidations() const { return invalidations_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  void Notify(const std::vector<client::NamespaceChange>& changes);
  void InvalEntry(InodeId parent, std::string_view name);
  void InvalInode(InodeId ino, bool pages);
  void Write(const iovec* iov, int count);

  client::Client& client_;
  const int device_;
  const Duration interval_;
  CacheTimeouts& timeouts_;
  CachedOpens& opens_;
  std::atomic<uint64_t> invalidations_{0};
  std::mutex mu_;  // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace t0fs::fuse
