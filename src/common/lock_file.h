// LockFile: an exclusive flock held for the life of a process, so that two
// daemons never serve the same metadata database or volume.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/status.h"

namespace t0fs {

class LockFile {
 public:
  // Locks `path` (created if missing) without waiting; kBusy when another
  // process holds it (the message names its pid, recorded in the file).
  static Result<LockFile> Acquire(const std::string& path, const std::string& what);

 private:
  explicit LockFile(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace t0fs
