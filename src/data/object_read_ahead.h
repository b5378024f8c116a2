// ObjectReadAhead: the bytes a data node read ahead for a client that reads
// a chunk through the object tier (ObjectRead, protect=object) in order.
//
// A reader whose replicas are lost reads the chunk's object piece by piece
// (the mount's requests, up to 1 MiB); each piece was two ranged GETs (the
// bytes and their checksums), so a sequential reader paid an HTTP round trip
// per megabyte. A read that continues where the previous read of the same
// chunk version ended (or starts at 0) fetches a window instead, kMinWindow
// bytes at first; the next reads are served from it. As soon as a reader
// reads from a window, the next one (twice as large, up to kMaxWindow) is
// fetched in the background, so GETs follow each other while the reader
// goes through the window and it rarely waits for one; a reader
// that reaches it while it is on its way waits for it rather than fetch the
// same bytes. A read elsewhere fetches just what it asks for. Objects are
// written once per chunk version, so what is kept can never be out of date:
// windows are only dropped for room (least recently used first, kBudget
// bytes and kEntries readers at most: a reader holds two windows, so the
// budget keeps two readers' at full size).
//
// Only verified bytes are kept: the fetch checks them against the object's
// checksums. A window that fails its check (a damaged block past the bytes
// asked for) is not kept, and the read fetches exactly what it asks for, so
// it fails only when its own bytes are bad.
//
// Thread safety: safe for concurrent use; fetches run outside the lock (two
// readers of one chunk may both fetch, the later window replaces the other).
// One background thread fetches the windows ahead; the destructor waits for
// the fetch it runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include "common/ids.h"
#include "common/status.h"

namespace t0fs::data {

class ObjectReadAhead {
 public:
  ObjectReadAhead() = default;
  ~ObjectReadAhead();
  ObjectReadAhead(const ObjectReadAhead&) = delete;
  ObjectReadAhead& operator=(const ObjectReadAhead&) = delete;

  static constexpr size_t kMinWindow = 8u << 20;   // a sequential reader's first window
  static constexpr size_t kMaxWindow = 32u << 20;  // and its largest
  static constexpr size_t kBudget = 128u << 20;    // bytes kept in all windows
  static constexpr size_t kEntries = 16;           // readers remembered

  // Reads out.size() bytes at `offset` of the object into `out`, verified;
  // returns the bytes that arrived (short at the object's end). Kept for a
  // window fetched ahead: it must own what it uses (no references to the
  // caller's stack).
  using Fetch = std::function<Result<size_t>(uint64_t offset, std::span<std::byte> out)>;

  // Reads out.size() bytes at `offset` of the object of `chunk` at
  // `version`: from a window kept, or through `fetch` (a window, or just
  // these bytes). Returns the bytes read, short at the object's end.
  Result<size_t> Read(ChunkId chunk, uint64_t version, uint64_t offset, std::span<std::byte> out,
                      const Fetch& fetch);

  // Reads answered from a window kept, and fetches made (for tests and
  // metrics).
  uint64_t hits() const { return hits_.load(); }
  uint64_t fetches() const { return fetches_.load(); }  // background ones included
  uint64_t fetched_ahead() const { return fetched_ahead_.load(); }

 private:
  struct Window {
    uint64_t start = 0;   // object offset of bytes[0]
    size_t length = 0;    // bytes kept
    bool at_end = false;  // the object ends at start + length
    std::unique_ptr<std::byte[]> bytes;

    uint64_t end() const { return start + length; }
    // Holds every byte of [offset, offset + len), or all there is from
    // offset to the object's end.
    bool Covers(uint64_t offset, size_t len) const {
      return bytes && offset >= start && (offset + len <= end() || (at_end && offset <= end()));
    }
  };
  struct Entry {
    ChunkId chunk;
    uint64_t version = 0;
    Window current;              // the reader's window
    Window ahead;                // the one after it, fetched in the background
    bool ahead_pending = false;  // that fetch is queued or running
    uint64_t next = 0;           // where the latest read of this chunk version ended
    size_t window = kMinWindow;  // bytes the next window fetch asks for
  };
  struct AheadTask {
    ChunkId chunk;
    uint64_t version = 0;
    uint64_t start = 0;
    size_t size = 0;
    Fetch fetch;
  };

  // The entry of `chunk` at `version`, moved to the front (mu_ held).
  Entry* Find(ChunkId chunk, uint64_t version);
  // Copies what `window` holds at `offset` into `out` (it covers it); the
  // bytes copied (mu_ held).
  size_t Serve(Entry& e, const Window& window, uint64_t offset, std::span<std::byte> out);
  // Queues the fetch of the window after e's current one unless it is on
  // its way or there already (mu_ held).
  void MaybeFetchAhead(Entry& e, const Fetch& fetch);
  // Drops the least recently used windows beyond kBudget, never the front
  // entry's (mu_ held).
  void Trim();
  void AheadLoop();

  // (Counted without mu_: metrics scrapes read them.)
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> fetches_{0};
  std::atomic<uint64_t> fetched_ahead_{0};
  std::mutex mu_;               // guards what follows
  std::list<Entry> entries_;    // most recently used first
  std::condition_variable cv_;  // an ahead fetch ended, or a task was queued
  std::deque<AheadTask> tasks_;
  bool stopping_ = false;
  std::thread ahead_thread_;  // started with the first task
};

}  // namespace t0fs::data
