#include "fuse/ops/cached_opens.h"

namespace t0fs::fuse {

void CachedOpens::Opened(uint64_t fh, InodeId ino) {
  std::lock_guard lock(mu_);
  handles_[fh] = ino;
  inodes_[ino].opens++;
  open_inodes_.store(inodes_.size(), std::memory_order_relaxed);
}

void CachedOpens::Released(uint64_t fh, const std::function<void(InodeId)>& forget) {
  std::lock_guard lock(mu_);
  auto h = handles_.find(fh);
  if (h == handles_.end()) return;
  const InodeId ino = h->second;
  handles_.erase(h);
  auto it = inodes_.find(ino);
  if (it == inodes_.end() || --it->second.opens > 0) return;
  const bool changed = it->second.changed;
  inodes_.erase(it);
  open_inodes_.store(inodes_.size(), std::memory_order_relaxed);
  if (changed) forget(ino);
}

void CachedOpens::NotifyUnlessOpen(InodeId ino, const std::function<void()>& notify) {
  std::lock_guard lock(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return notify();
  it->second.changed = true;
  held_back_.fetch_add(1, std::memory_order_relaxed);
}

bool CachedOpens::IsOpen(InodeId ino) const {
  if (open_inodes_.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lock(mu_);
  return inodes_.count(ino) != 0;
}

}  // namespace t0fs::fuse
