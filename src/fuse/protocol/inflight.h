// InflightTable: which request each worker is processing, so an INTERRUPT
// (which names its target by unique id) can reach it.
//
// One slot per worker (a worker processes one request at a time), so the hot
// path is two atomic stores and one atomic load: no lock, no allocation.
// An INTERRUPT can be read by another worker before the target's worker has
// registered the target; such interrupts wait in a small ring of pending ids
// that Begin() consults. The two sides order their accesses with seq_cst
// atomics (store own id, then load the other's), so at least one of them sees
// the other and the interrupt is not lost.
//
// What an interrupt does (docs/fuse.md): the request is served all the
// same; long handlers poll Request::interrupted() between Client calls; a
// Client call stops waiting for an unreachable service (common/cancel.h).
//
// Thread safety: Begin/End/interrupted(slot) only from the slot's worker;
// Interrupt() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace t0fs::fuse {

class InflightTable {
 public:
  explicit InflightTable(size_t slots);

  // Worker `slot` starts on request `unique` (never 0).
  void Begin(size_t slot, uint64_t unique);
  void End(size_t slot);
  const std::atomic<bool>* flag(size_t slot) const { return &slots_[slot].interrupted; }
  bool interrupted(size_t slot) const { return slots_[slot].interrupted.load(); }

  // The kernel asks to interrupt request `unique`.
  void Interrupt(uint64_t unique);

  // INTERRUPT requests received (a metric; tests check delivery with it).
  uint64_t interrupts() const { return interrupts_.load(std::memory_order_relaxed); }

  // Workers processing a request now (a metric: the mount's queue depth).
  size_t busy() const;

  size_t pending_for_test() const { return pending_count_.load(); }

 private:
  static constexpr size_t kPendingCap = 64;
  // Pending ids older than this many requests (uniques step by 2) are dropped:
  // their target was answered long ago.
  static constexpr uint64_t kPendingWindow = 2 * 4096;

  struct alignas(64) Slot {
    std::atomic<uint64_t> unique{0};
    std::atomic<bool> interrupted{false};
  };

  bool TakePending(uint64_t unique, uint64_t now_unique);

  std::unique_ptr<Slot[]> slots_;
  size_t slot_count_;
  std::mutex mu_;  // guards pending_ (never held across I/O)
  std::array<uint64_t, kPendingCap> pending_{};  // 0 = empty entry
  std::atomic<size_t> pending_count_{0};         // non-empty entries in pending_
  std::atomic<uint64_t> interrupts_{0};
};

}  // namespace t0fs::fuse
