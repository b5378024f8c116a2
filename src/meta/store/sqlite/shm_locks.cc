#include "meta/store/sqlite/shm_locks.h"

#include <sqlite3.h>

namespace t0fs::meta::sqlite {

int ShmLocks::Lock(const void* owner, int ofst, int n, int flags) {
  if (ofst < 0 || n < 1 || ofst + n > kSlots) return SQLITE_MISUSE;
  const bool unlock = (flags & SQLITE_SHM_UNLOCK) != 0;
  const bool shared = (flags & SQLITE_SHM_SHARED) != 0;
  if (unlock == ((flags & SQLITE_SHM_LOCK) != 0) ||
      shared == ((flags & SQLITE_SHM_EXCLUSIVE) != 0)) {
    return SQLITE_MISUSE;
  }
  const auto mask = static_cast<uint8_t>(((1u << n) - 1) << ofst);
  std::lock_guard lock(mu_);
  if (unlock) {
    auto it = held_.find(owner);
    if (it == held_.end()) return SQLITE_OK;
    it->second.shared &= static_cast<uint8_t>(~mask);
    it->second.exclusive &= static_cast<uint8_t>(~mask);
    if (it->second.shared == 0 && it->second.exclusive == 0) held_.erase(it);
    return SQLITE_OK;
  }
  uint8_t others_shared = 0, others_exclusive = 0;
  for (const auto& [who, held] : held_) {
    if (who == owner) continue;
    others_shared |= held.shared;
    others_exclusive |= held.exclusive;
  }
  if (shared) {
    if (auto it = held_.find(owner); it != held_.end() && (it->second.shared & mask) == mask) {
      return SQLITE_OK;
    }
    if ((others_exclusive & mask) != 0) return SQLITE_BUSY;
    held_[owner].shared |= mask;
  } else {
    if (((others_shared | others_exclusive) & mask) != 0) return SQLITE_BUSY;
    held_[owner].exclusive |= mask;
  }
  return SQLITE_OK;
}

void ShmLocks::Forget(const void* owner) {
  std::lock_guard lock(mu_);
  held_.erase(owner);
}

}  // namespace t0fs::meta::sqlite
