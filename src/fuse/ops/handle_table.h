// HandleTable: the file handles (fh) handed to the kernel, mapped to the
// objects behind them (open client::File, directory listings).
//
// An fh is (generation << 32) | (slot + 1): never 0, and a stale fh (of a
// released handle whose slot was reused) does not match. Values are held by
// shared_ptr so a handle in use by one request cannot be destroyed under it
// by another (the kernel should never release a handle with requests in
// flight; this makes a misbehaving kernel harmless).
//
// Thread safety: safe for concurrent use. The lock covers only the table
// (a few instructions, no allocation on Get), never a Client call.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace t0fs::fuse {

template <typename T>
class HandleTable {
 public:
  uint64_t Add(std::shared_ptr<T> value) {
    std::lock_guard lock(mu_);
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& slot = slots_[index];
    slot.generation++;
    slot.value = std::move(value);
    ++count_;
    return (uint64_t(slot.generation) << 32) | (uint64_t(index) + 1);
  }

  // The value of `fh`, or null if it is not (or no longer) a handle.
  std::shared_ptr<T> Get(uint64_t fh) const {
    std::lock_guard lock(mu_);
    const Slot* slot = Find(fh);
    return slot != nullptr ? slot->value : nullptr;
  }

  // Removes `fh` and returns its value (null if unknown).
  std::shared_ptr<T> Remove(uint64_t fh) {
    std::lock_guard lock(mu_);
    Slot* slot = const_cast<Slot*>(Find(fh));
    if (slot == nullptr) return nullptr;
    std::shared_ptr<T> value = std::move(slot->value);
    slot->value.reset();
    free_.push_back(static_cast<uint32_t>((fh & 0xffffffffu) - 1));
    --count_;
    return value;
  }

  // Removes every handle (at unmount) and returns their values.
  std::vector<std::shared_ptr<T>> Drain() {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<T>> out;
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].value) {
        out.push_back(std::move(slots_[i].value));
        slots_[i].value.reset();
        free_.push_back(i);
      }
    }
    count_ = 0;
    return out;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  struct Slot {
    uint32_t generation = 0;
    std::shared_ptr<T> value;
  };

  const Slot* Find(uint64_t fh) const {
    uint64_t index = fh & 0xffffffffu;
    if (index == 0 || index > slots_.size()) return nullptr;
    const Slot& slot = slots_[index - 1];
    if (!slot.value || slot.generation != uint32_t(fh >> 32)) return nullptr;
    return &slot;
  }

  mutable std::mutex mu_;  // guards slots_, free_, count_
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t count_ = 0;
};

}  // namespace t0fs::fuse
