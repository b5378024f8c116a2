#include "fuse/ops/passthrough.h"

#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"
#include "fuse/protocol/abi.h"

namespace t0fs::fuse {

PassthroughTable::Kernel PassthroughTable::DevFuse() {
  return Kernel{[](int device, int fd) -> int32_t {
                  abi::BackingMap map{};
                  map.fd = fd;
                  return ::ioctl(device, abi::kDevIocBackingOpen, &map);
                },
                [](int device, int32_t id) {
                  uint32_t arg = static_cast<uint32_t>(id);
                  if (::ioctl(device, abi::kDevIocBackingClose, &arg) != 0) {
                    LOG_DEBUG("fuse: close passthrough backing {}: {}", id, std::strerror(errno));
                  }
                }};
}

PassthroughTable::Decision PassthroughTable::Count(Kind kind) {
  switch (kind) {
    case Kind::kCached:
      opens_cached_++;
      break;
    case Kind::kPassthrough:
      opens_passthrough_++;
      break;
    case Kind::kRefused:
      opens_refused_++;
      break;
  }
  return Decision{kind, 0, Status::Ok()};
}

PassthroughTable::Decision PassthroughTable::Open(int device, InodeId ino, client::File& file, int flags,
                                                  bool may_start) {
  if (!enabled_) return Count(Kind::kCached);
  const bool write = (flags & O_ACCMODE) != O_RDONLY;
  std::unique_lock lock(mu_);
  registered_.wait(lock, [&] { return !inodes_[ino].registering; });
  Inode& in = inodes_[ino];
  if (in.cached > 0) {
    in.cached++;
    return Count(Kind::kCached);
  }
  if (in.passthrough > 0) {
    // The kernel serves this inode from its backing file: join it (the
    // reference taken now keeps the backing open meanwhile).
    in.passthrough++;
    const int32_t id = in.backing_id;
    lock.unlock();
    auto pt = file.OpenPassthrough(write, /*join=*/true);
    if (pt.ok()) {
      Decision d = Count(Kind::kPassthrough);
      d.backing_id = id;
      return d;
    }
    UniqueFd backing;
    int32_t close_id;
    {
      std::lock_guard relock(mu_);
      close_id = DropPassthrough(ino, &backing);
    }
    if (close_id >= 0) CloseBacking(device, close_id);
    Decision d = Count(Kind::kRefused);
    d.why = pt.status();
    return d;
  }

  if (!may_start) {
    in.cached++;
    return Count(Kind::kCached);
  }
  in.registering = true;
  lock.unlock();
  auto pt = file.OpenPassthrough(write, /*join=*/false);
  if (!pt.ok()) LOG_DEBUG("fuse: inode {} not passthrough: {}", ino, pt.status().message());
  int32_t backing_id = -1;
  if (pt.ok()) {
    backing_id = kernel_.open_backing(device, pt->fd.get());
    if (backing_id < 0) {
      int err = errno;
      if (failures_++ == 0) {
        LOG_WARN("fuse: the kernel refused a passthrough backing file ({}); such files are served "
                 "through the mount", std::strerror(err));
      } else {
        LOG_DEBUG("fuse: passthrough backing for inode {} refused: {}", ino, std::strerror(err));
      }
      file.AbandonPassthrough();
    }
  }
  lock.lock();
  Inode& now = inodes_[ino];
  now.registering = false;
  registered_.notify_all();
  if (backing_id >= 0) {
    now.passthrough = 1;
    now.backing_id = backing_id;
    now.backing = std::move(pt->fd);
    backing_files_++;
    Decision d = Count(Kind::kPassthrough);
    d.backing_id = backing_id;
    return d;
  }
  now.cached++;
  return Count(Kind::kCached);
}

int32_t PassthroughTable::DropPassthrough(InodeId ino, UniqueFd* backing) {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return -1;
  Inode& in = it->second;
  int32_t close_id = -1;
  if (in.passthrough > 0 && --in.passthrough == 0) {
    close_id = in.backing_id;
    *backing = std::move(in.backing);
    in.backing_id = 0;
  }
  if (in.cached == 0 && in.passthrough == 0 && !in.registering) inodes_.erase(it);
  return close_id;
}

void PassthroughTable::Bind(uint64_t fh, InodeId ino, const Decision& d) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  handles_[fh] = Handle{ino, d.kind};
}

void PassthroughTable::Release(int device, uint64_t fh) {
  if (!enabled_) return;
  int32_t close_id = -1;
  UniqueFd backing;
  {
    std::lock_guard lock(mu_);
    auto h = handles_.find(fh);
    if (h == handles_.end()) return;
    Handle handle = h->second;
    handles_.erase(h);
    if (handle.kind == Kind::kPassthrough) {
      close_id = DropPassthrough(handle.ino, &backing);
    } else if (handle.kind == Kind::kCached) {
      auto it = inodes_.find(handle.ino);
      if (it == inodes_.end()) return;
      if (it->second.cached > 0) it->second.cached--;
      if (it->second.cached == 0 && it->second.passthrough == 0 && !it->second.registering) inodes_.erase(it);
    }
  }
  if (close_id >= 0) CloseBacking(device, close_id);
}

bool PassthroughTable::ServesNow(InodeId ino) const {
  if (!enabled_) return false;
  std::lock_guard lock(mu_);
  auto it = inodes_.find(ino);
  return it != inodes_.end() && it->second.passthrough > 0;
}

void PassthroughTable::CloseBacking(int device, int32_t id) {
  kernel_.close_backing(device, id);
  backing_files_--;
}

PassthroughTable::Stats PassthroughTable::stats() const {
  return Stats{opens_passthrough_.load(), opens_cached_.load(), opens_refused_.load(), failures_.load(),
               backing_files_.load()};
}

}  // namespace t0fs::fuse
