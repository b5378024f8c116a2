// ChangeFeed: the latest namespace and attribute changes made through this
// meta server, kept so that other clients' mounts can drop what their kernel
// cached of them (the Changes RPC; docs/fuse.md "Kernel caches").
//
// Memory only: a ring of the last `capacity` changes, numbered from 1 and
// named by a random epoch. A restart starts a new epoch, and an asker that
// falls more than `capacity` changes behind is told that it lost some
// (complete = false): it must then drop everything it cached.
//
// Long polls: an asker with nothing new parks its request in waiting()
// (rpc/parking.h); every Add wakes the parked requests of other sessions.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/ids.h"
#include "rpc/parking.h"

namespace t0fs::meta {

class ChangeFeed {
 public:
  static constexpr size_t kDefaultCapacity = size_t(1) << 16;
  static constexpr size_t kMaxPage = 4096;

  // One change: the name `name` in directory `parent` (when name is not
  // empty), and/or the attributes or data of `ino` (when valid).
  struct Change {
    InodeId parent;
    std::string name;
    InodeId ino;
  };
  struct Page {
    uint64_t epoch = 0;
    uint64_t next = 0;      // ask after this next time
    bool complete = true;   // false: changes since `after` were lost
    bool more = false;      // stopped at `max`: ask again at once
    std::vector<Change> changes;
  };

  explicit ChangeFeed(size_t capacity = kDefaultCapacity);

  // Records changes made by session `by`.
  void Add(SessionId by, std::span<const Change> changes);
  void Add(SessionId by, std::initializer_list<Change> changes) {
    Add(by, std::span(changes.begin(), changes.size()));
  }
  // The changes numbered `after` and later that `asker` did not make
  // itself, at most `max` of them examined (0: kMaxPage). `epoch` 0 is a
  // first ask: no changes, the current epoch and position.
  Page Since(SessionId asker, uint64_t epoch, uint64_t after, size_t max) const;

  uint64_t epoch() const { return epoch_; }
  // Where the Changes requests with nothing new wait (tagged by session).
  const rpc::Parking& waiting() const { return waiting_; }
  // The longest a request may wait.
  static constexpr std::chrono::seconds kMaxWait{30};

 private:
  struct Entry {
    SessionId by;
    Change change;
  };

  const uint64_t epoch_;
  mutable std::mutex mu_;  // guards ring_, next_
  std::vector<Entry> ring_;
  uint64_t next_ = 1;  // number of the next change; change n sits at ring_[n % size]
  rpc::Parking waiting_;
};

}  // namespace t0fs::meta
