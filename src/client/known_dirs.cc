#include "client/known_dirs.h"

namespace t0fs::client {

void KnownDirs::Made(InodeId dir) {
  std::lock_guard lock(mu_);
  ForgetLocked(dir);
  while (dirs_.size() >= kMaxDirs) ForgetLocked(lru_.back());
  lru_.push_front(dir);
  Dir& d = dirs_[dir];
  d.lru = lru_.begin();
  d.made = std::chrono::steady_clock::now();
}

void KnownDirs::Added(InodeId dir, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  if (!it->second.names.emplace(name).second) return;
  ++names_;
  // Too many names: the least recently used directories go (this one too,
  // when it was used least recently or alone is too big).
  while (names_ > kMaxNames && !lru_.empty()) ForgetLocked(lru_.back());
  it = dirs_.find(dir);
  if (it != dirs_.end()) Touch(it->second);
}

void KnownDirs::Removed(InodeId dir, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  auto found = it->second.names.find(name);
  if (found != it->second.names.end()) {
    it->second.names.erase(found);
    --names_;
  }
  Touch(it->second);
}

void KnownDirs::Forget(InodeId dir) {
  std::lock_guard lock(mu_);
  ForgetLocked(dir);
}

void KnownDirs::ForgetAll() {
  std::lock_guard lock(mu_);
  dirs_.clear();
  lru_.clear();
  names_ = 0;
}

void KnownDirs::Heard() {
  auto until = std::chrono::steady_clock::now() + kFresh;
  heard_until_ns_.store(until.time_since_epoch().count(), std::memory_order_release);
}

bool KnownDirs::Missing(InodeId dir, std::string_view name) {
  const auto now = std::chrono::steady_clock::now();
  if (now.time_since_epoch().count() >= heard_until_ns_.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return false;
  if (now - it->second.made >= kMaxAge) {
    ForgetLocked(dir);
    return false;
  }
  Touch(it->second);
  return !it->second.names.contains(name);
}

size_t KnownDirs::dirs() const {
  std::lock_guard lock(mu_);
  return dirs_.size();
}

void KnownDirs::ForgetLocked(InodeId dir) {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  names_ -= it->second.names.size();
  lru_.erase(it->second.lru);
  dirs_.erase(it);
}

void KnownDirs::Touch(Dir& d) { lru_.splice(lru_.begin(), lru_, d.lru); }

}  // namespace t0fs::client
