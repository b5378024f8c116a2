// DiskReserve: space the metadata store keeps back for itself on its file
// system, so that a full disk cannot wedge the cluster.
//
// On a single host the database usually shares its file system with a data
// volume (`t0fs up`), and a writer — through the kernel's passthrough
// writes, or another program — can fill it to the last block. Every
// metadata write then fails, the deletions that would free space among them:
// `rm` answered EIO and only a manual clean-up got the cluster back. So the
// store keeps a file of `size` bytes, allocated (fallocate) next to the
// database; a write transaction that finds the disk full releases it and
// runs again (SqliteTxn::Commit), and deletions go through. The file is
// allocated again once the file system has room for several times its size.
//
// Thread safety: none (SqliteEngine calls it under its mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace t0fs::meta::sqlite {

class DiskReserve {
 public:
  // The file `path`, of `size` bytes (0: no reserve).
  DiskReserve(std::string path, uint64_t size) : path_(std::move(path)), size_(size) {}

  // Allocates the file when it is missing and the file system has at least
  // kRoomFactor × size free (otherwise it would take the last free space
  // itself); at most once per kRefillInterval unless `force`. A
  // failure is logged, never fatal. True when the reserve is in place.
  bool Refill(bool force = false);
  // Removes the file (the disk is full). True if it was there: the caller
  // may try again.
  bool Release();
  bool held() const { return held_; }
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  static constexpr uint64_t kRoomFactor = 4;
  static constexpr std::chrono::seconds kRefillInterval{10};

 private:
  const std::string path_;
  const uint64_t size_;
  bool held_ = false;
  std::chrono::steady_clock::time_point last_try_{};
};

}  // namespace t0fs::meta::sqlite
