// CachedOpens: the inodes with a file open through the page cache on this
// mount (every open not served by passthrough), and what the ChangeWatcher
// held back from the kernel about them meanwhile.
//
// Why: FUSE_NOTIFY_INVAL_INODE makes the kernel discard the attributes of
// every request sent before it, the size a short READ reports at the end of
// the file included. With a size cached larger than the file is now
// (another client shrank it), the kernel then keeps the zeros it filled
// past the end in its page cache and returns them to the reader. The
// watcher's notifications come after the poll that heard a change and again
// one interval later, so one often lands while a reader that opened since
// reads the file. An inode open here needs none of them: the OPEN told the
// kernel its attributes were out of date (OpOpen), replies about an open
// inode carry the short attribute time (attr-timeout, not cache-timeout),
// and its data is close-to-open. So the watcher leaves an open inode alone,
// and its last close passes the change on.
//
// Thread safety: safe for concurrent use. The watcher notifies under the
// lock of the inode's shard, so an OPEN of the same inode (Opened) waits for
// the notification and never races it (one of other inodes waits only if
// they share the shard); a read never takes a lock.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "common/ids.h"

namespace t0fs::fuse {

class CachedOpens {
 public:
  // Handle `fh` of `ino` goes to the kernel, not served by passthrough.
  void Opened(uint64_t fh, InodeId ino);
  // RELEASE of `fh` (any handle: those not counted are ignored). When it was
  // its inode's last and the watcher held a change back, `forget(ino)` runs,
  // under the lock.
  void Released(uint64_t fh, const std::function<void(InodeId)>& forget);
  // The watcher: runs `notify` (under the lock) unless `ino` is open here;
  // then the inode's last close runs Released's `forget` instead.
  void NotifyUnlessOpen(InodeId ino, const std::function<void()>& notify);
  bool IsOpen(InodeId ino) const;
  // Changes held back until a last close so far.
  uint64_t held_back() const { return held_back_.load(std::memory_order_relaxed); }

 private:
  struct Inode {
    int opens = 0;
    bool changed = false;  // the watcher held a change back
  };
  struct Shard {
    mutable std::mutex mu;  // guards inodes
    std::unordered_map<InodeId, Inode> inodes;
  };
  Shard& ShardOf(InodeId ino) { return shards_[ino.value() % shards_.size()]; }
  const Shard& ShardOf(InodeId ino) const { return shards_[ino.value() % shards_.size()]; }

  std::mutex handles_mu_;  // guards handles_ (never held with a shard's lock)
  std::unordered_map<uint64_t, InodeId> handles_;
  std::array<Shard, 16> shards_;
  std::atomic<size_t> open_inodes_{0};  // inodes in the shards: IsOpen skips the locks when 0
  std::atomic<uint64_t> held_back_{0};
};

}  // namespace t0fs::fuse
