#include "fuse/protocol/inflight.h"

namespace t0fs::fuse {

InflightTable::InflightTable(size_t slots)
    : slots_(std::make_unique<Slot[]>(slots)), slot_count_(slots) {}

void InflightTable::Begin(size_t slot, uint64_t unique) {
  Slot& s = slots_[slot];
  s.interrupted.store(false, std::memory_order_relaxed);
  s.unique.store(unique);  // seq_cst: ordered before the pending_count_ load
  if (pending_count_.load() != 0 && TakePending(unique, unique)) {
    s.interrupted.store(true);
  }
}

size_t InflightTable::busy() const {
  size_t n = 0;
  for (size_t slot = 0; slot < slot_count_; ++slot) {
    n += slots_[slot].unique.load(std::memory_order_relaxed) != 0 ? 1 : 0;
  }
  return n;
}

void InflightTable::End(size_t slot) {
  slots_[slot].unique.store(0, std::memory_order_release);
}

void InflightTable::Interrupt(uint64_t unique) {
  interrupts_.fetch_add(1, std::memory_order_relaxed);
  if (unique == 0) return;
  {
    std::lock_guard lock(mu_);
    size_t free_idx = kPendingCap;
    for (size_t i = 0; i < kPendingCap; ++i) {
      if (pending_[i] == unique) return;  // already pending
      if (pending_[i] == 0 && free_idx == kPendingCap) free_idx = i;
    }
    if (free_idx == kPendingCap) {
      // Full of stale ids: replace the oldest (smallest) one.
      free_idx = 0;
      for (size_t i = 1; i < kPendingCap; ++i) {
        if (pending_[i] < pending_[free_idx]) free_idx = i;
      }
    } else {
      pending_count_.fetch_add(1);  // seq_cst: ordered before the slot loads below
    }
    pending_[free_idx] = unique;
  }
  for (size_t i = 0; i < slot_count_; ++i) {
    if (slots_[i].unique.load() == unique) {
      slots_[i].interrupted.store(true);
      TakePending(unique, 0);
      return;
    }
  }
}

bool InflightTable::TakePending(uint64_t unique, uint64_t now_unique) {
  std::lock_guard lock(mu_);
  bool found = false;
  for (size_t i = 0; i < kPendingCap; ++i) {
    uint64_t id = pending_[i];
    if (id == 0) continue;
    bool stale = now_unique > kPendingWindow && id < now_unique - kPendingWindow;
    if (id == unique || stale) {
      found = found || id == unique;
      pending_[i] = 0;
      pending_count_.fetch_sub(1);
    }
  }
  return found;
}

}  // namespace t0fs::fuse
