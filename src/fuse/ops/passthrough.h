// PassthroughTable: which open files the kernel serves itself from a local
// chunk file (FUSE passthrough, kernel >= 6.9), so that their reads (and,
// where the objective allows, writes) never reach this process.
//
// The kernel's rules for one inode (fs/fuse/iomode.c): while it is open by
// passthrough, every open of it must be passthrough with the same backing
// id (anything else fails with EIO, FOPEN_DIRECT_IO included); while it is
// open "cached" (page cache, requests to us), no open may be passthrough.
// So this table tracks both per inode and decides each open:
//   - an inode with cached opens: cached (as without passthrough);
//   - an inode with passthrough opens: the new open joins the backing
//     (client::File::OpenPassthrough with `join`: reads always; writes only
//     if the file has no other replica, else the open fails with EBUSY, as
//     a replicated file read through passthrough on this node must not take
//     writes that skip its other replicas);
//   - otherwise the first open decides: an eligible file (one chunk with a
//     local replica; for writers, the only replica) registers its chunk file
//     with the kernel, anything else is cached.
// Opens racing a registration wait for it. Our counts drop at RELEASE,
// after the kernel's, so they never claim less than the kernel has.
//
// Thread safety: safe for concurrent use; the lock is never held across a
// Client call or an ioctl.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "common/fd.h"
#include "common/ids.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

class PassthroughTable {
 public:
  enum class Kind { kCached, kPassthrough, kRefused };
  struct Decision {
    Kind kind = Kind::kCached;
    int32_t backing_id = 0;  // kPassthrough
    Status why;              // kRefused: the open fails with this
  };
  struct Stats {
    uint64_t passthrough = 0;  // opens served by the kernel
    uint64_t cached = 0;       // opens through us (not eligible, or passthrough off)
    uint64_t refused = 0;      // opens that could neither join the kernel's backing nor be cached
    uint64_t failures = 0;     // eligible files the kernel refused as backing files
    uint64_t backing_files = 0;  // backing ids registered now
  };

  // The /dev/fuse backing ioctls (replaced in tests): open returns a
  // backing id or -1 with errno set.
  struct Kernel {
    std::function<int32_t(int device, int fd)> open_backing;
    std::function<void(int device, int32_t id)> close_backing;
  };
  static Kernel DevFuse();
  explicit PassthroughTable(Kernel kernel = DevFuse()) : kernel_(std::move(kernel)) {}

  // Off until INIT enabled passthrough (then every open is decided here).
  void Enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  // Decides how `file` (of `ino`, opened with open(2) `flags`) is served;
  // `device` is a /dev/fuse fd of the connection (for the backing ioctls).
  // `may_start`: false keeps an inode that is not yet served by the kernel
  // cached (the open still joins one that is).
  Decision Open(int device, InodeId ino, client::File& file, int flags, bool may_start = true);
  // Binds the decision to the handle the kernel was given.
  void Bind(uint64_t fh, InodeId ino, const Decision& d);
  // At RELEASE of `fh`: the inode's last passthrough handle closes its backing id.
  void Release(int device, uint64_t fh);
  // Whether a handle of `ino` served by passthrough is open here.
  bool ServesNow(InodeId ino) const;

  Stats stats() const;

 private:
  struct Inode {
    int cached = 0;
    int passthrough = 0;
    bool registering = false;  // a first passthrough open is registering the backing file
    int32_t backing_id = 0;
    UniqueFd backing;
  };
  struct Handle {
    InodeId ino;
    Kind kind;
  };
  Decision Count(Kind kind);
  // Drops one passthrough reference of `ino` (lock held); returns the
  // backing to close if it was the last.
  int32_t DropPassthrough(InodeId ino, UniqueFd* backing);
  void CloseBacking(int device, int32_t id);

  const Kernel kernel_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mu_;  // guards inodes_, handles_
  std::condition_variable registered_;  // an inode's registration finished
  std::unordered_map<InodeId, Inode> inodes_;
  std::unordered_map<uint64_t, Handle> handles_;
  std::atomic<uint64_t> opens_passthrough_{0}, opens_cached_{0}, opens_refused_{0}, failures_{0},
      backing_files_{0};
};

}  // namespace t0fs::fuse
