#include "fuse/ops/cached_opens.h"

namespace t0fs::fuse {

void CachedOpens::Opened(uint64_t fh, InodeId ino) {
  {
    std::lock_guard lock(handles_mu_);
    handles_[fh] = ino;
  }
  Shard& shard = ShardOf(ino);
  std::lock_guard lock(shard.mu);
  if (shard.inodes[ino].opens++ == 0) open_inodes_.fetch_add(1, std::memory_order_relaxed);
}

void CachedOpens::Released(uint64_t fh, const std::function<void(InodeId)>& forget) {
  InodeId ino;
  {
    std::lock_guard lock(handles_mu_);
    auto h = handles_.find(fh);
    if (h == handles_.end()) return;
    ino = h->second;
    handles_.erase(h);
  }
  Shard& shard = ShardOf(ino);
  std::lock_guard lock(shard.mu);
  auto it = shard.inodes.find(ino);
  if (it == shard.inodes.end() || --it->second.opens > 0) return;
  const bool changed = it->second.changed;
  shard.inodes.erase(it);
  open_inodes_.fetch_sub(1, std::memory_order_relaxed);
  if (changed) forget(ino);
}

void CachedOpens::NotifyUnlessOpen(InodeId ino, const std::function<void()>& notify) {
  Shard& shard = ShardOf(ino);
  std::lock_guard lock(shard.mu);
  auto it = shard.inodes.find(ino);
  if (it == shard.inodes.end()) return notify();
  it->second.changed = true;
  held_back_.fetch_add(1, std::memory_order_relaxed);
}

bool CachedOpens::IsOpen(InodeId ino) const {
  if (open_inodes_.load(std::memory_order_relaxed) == 0) return false;
  const Shard& shard = ShardOf(ino);
  std::lock_guard lock(shard.mu);
  return shard.inodes.count(ino) != 0;
}

}  // namespace t0fs::fuse
