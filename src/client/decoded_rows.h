// DecodedRows: the rows of erasure-coded chunks that degraded reads decoded
// lately, so that the next reads of a row (a sequential reader's next
// request) take them from memory instead of fetching K cells again.
//
// A row is the K data units of one stripe row of a chunk's cells at one
// version (ec/rows.h): bytes [row·K·unit, (row+1)·K·unit) of the chunk as
// that version holds them. The cells of a version never change (a write
// makes a new version, encoded again), and chunk ids are never reused, so
// a row found by (chunk, version, row) is that version's bytes: nothing to
// invalidate. Least recently used rows go first once the rows kept pass
// `capacity` bytes; a row larger than that is not kept.
//
// Readers of one row at once (the kernel's read-ahead sends a row's
// requests together) decode it once: the first claims it (FindOrClaim
// returns null), the others wait for its Put or Release, up to kClaimWait.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "common/buffer.h"
#include "common/ids.h"

namespace t0fs::client {

class DecodedRows {
 public:
  static constexpr uint64_t kDefaultCapacity = uint64_t{32} << 20;
  static constexpr std::chrono::seconds kClaimWait{10};

  explicit DecodedRows(uint64_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // The row's bytes (short in a chunk's last row), or null.
  std::shared_ptr<const AlignedBuffer> Find(ChunkId chunk, uint64_t version, uint64_t row);
  // Find, but when another reader claimed the row, waits for it first; null:
  // the row is now the caller's to decode, then Put (or Release on failure).
  std::shared_ptr<const AlignedBuffer> FindOrClaim(ChunkId chunk, uint64_t version, uint64_t row);
  // Keeps `bytes` as the row (replacing an older entry for it); ends a claim.
  void Put(ChunkId chunk, uint64_t version, uint64_t row,
           std::shared_ptr<const AlignedBuffer> bytes);
  // Ends a claim without a row (the decode failed): a waiter decodes it.
  void Release(ChunkId chunk, uint64_t version, uint64_t row);
  // A buffer of at least `size` bytes for a row to Put: one of the evicted
  // rows nobody holds any more when there is one (a fresh buffer of
  // megabytes costs a page fault per page on every decode).
  std::shared_ptr<AlignedBuffer> Allocate(uint64_t size);

  uint64_t bytes() const;
  size_t rows() const;

 private:
  struct Key {
    ChunkId chunk;
    uint64_t version = 0;
    uint64_t row = 0;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    std::shared_ptr<const AlignedBuffer> bytes;
  };

  static constexpr size_t kMaxSpare = 2;

  // The entry's bytes, moved to the front (caller holds mu_); null if absent.
  std::shared_ptr<const AlignedBuffer> FindLocked(const Key& key);
  void Unclaim(const Key& key);  // caller holds mu_

  const uint64_t capacity_;
  mutable std::mutex mu_;              // guards the fields below
  std::condition_variable claims_cv_;  // a claim ended
  std::list<Entry> entries_;           // most recently used first; a few, searched in order
  std::vector<Key> claimed_;           // rows being decoded
  std::vector<std::shared_ptr<const AlignedBuffer>> spare_;  // evicted rows' buffers, for Allocate
  uint64_t bytes_ = 0;
};

}  // namespace t0fs::client
