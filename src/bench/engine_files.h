// FdTable: the files a POSIX engine (psync, io_uring) has open, by handle.
// Internal to the engines.
#pragma once

#include <fcntl.h>

#include <string>
#include <vector>

#include "bench/engine.h"
#include "common/fd.h"

namespace t0fs::bench {

int OpenFlags(const OpenMode& mode);

class FdTable {
 public:
  Result<int> Open(const std::string& path, const OpenMode& mode);
  Status Close(int handle);
  int fd(int handle) const { return fds_[static_cast<size_t>(handle)].get(); }

 private:
  std::vector<UniqueFd> fds_;
};

}  // namespace t0fs::bench
