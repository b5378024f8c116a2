#include "client/decoded_rows.h"

#include <algorithm>

namespace t0fs::client {

std::shared_ptr<const AlignedBuffer> DecodedRows::FindLocked(const Key& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return it->bytes;
    }
  }
  return nullptr;
}

std::shared_ptr<const AlignedBuffer> DecodedRows::Find(ChunkId chunk, uint64_t version,
                                                       uint64_t row) {
  std::lock_guard lock(mu_);
  return FindLocked(Key{chunk, version, row});
}

std::shared_ptr<const AlignedBuffer> DecodedRows::FindOrClaim(ChunkId chunk, uint64_t version,
                                                              uint64_t row) {
  const Key key{chunk, version, row};
  std::unique_lock lock(mu_);
  auto claimed = [&] { return std::find(claimed_.begin(), claimed_.end(), key) != claimed_.end(); };
  // Another reader decodes it: its row, unless it fails or takes too long
  // (then this reader decodes it too, without a claim of its own).
  if (claimed_.size() > 0 && claimed()) {
    if (!claims_cv_.wait_for(lock, kClaimWait, [&] { return !claimed(); })) return nullptr;
  }
  if (auto bytes = FindLocked(key)) return bytes;
  claimed_.push_back(key);
  return nullptr;
}

void DecodedRows::Unclaim(const Key& key) {
  auto it = std::find(claimed_.begin(), claimed_.end(), key);
  if (it == claimed_.end()) return;
  claimed_.erase(it);
  claims_cv_.notify_all();
}

void DecodedRows::Put(ChunkId chunk, uint64_t version, uint64_t row,
                      std::shared_ptr<const AlignedBuffer> bytes) {
  const Key key{chunk, version, row};
  std::lock_guard lock(mu_);
  Unclaim(key);
  if (!bytes || bytes->size() > capacity_) return;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      bytes_ -= it->bytes->size();
      entries_.erase(it);
      break;
    }
  }
  bytes_ += bytes->size();
  entries_.push_front(Entry{key, std::move(bytes)});
  while (bytes_ > capacity_) {
    bytes_ -= entries_.back().bytes->size();
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(entries_.back().bytes));
    entries_.pop_back();
  }
}

void DecodedRows::Release(ChunkId chunk, uint64_t version, uint64_t row) {
  std::lock_guard lock(mu_);
  Unclaim(Key{chunk, version, row});
}

std::shared_ptr<AlignedBuffer> DecodedRows::Allocate(uint64_t size) {
  {
    std::lock_guard lock(mu_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      // Still read by a reader that found it before its eviction: not yet.
      if ((*it)->size() < size || it->use_count() != 1) continue;
      auto reused = std::const_pointer_cast<AlignedBuffer>(std::move(*it));
      spare_.erase(it);
      return reused;
    }
  }
  return std::make_shared<AlignedBuffer>(size);
}

uint64_t DecodedRows::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t DecodedRows::rows() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace t0fs::client
