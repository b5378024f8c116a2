#include "bench/engine_files.h"

#include <cerrno>

namespace t0fs::bench {

int OpenFlags(const OpenMode& mode) {
  int flags = mode.read && mode.write ? O_RDWR : mode.write ? O_WRONLY : O_RDONLY;
  if (mode.create) flags |= O_CREAT;
  if (mode.truncate) flags |= O_TRUNC;
  if (mode.direct) flags |= O_DIRECT;
  return flags | O_CLOEXEC;
}

Result<int> FdTable::Open(const std::string& path, const OpenMode& mode) {
  int fd = ::open(path.c_str(), OpenFlags(mode), 0644);
  if (fd < 0) {
    int err = errno;
    if (err == EINVAL && mode.direct) {
      return Status(StatusCode::kInvalidArgument,
                    "open " + path + ": O_DIRECT not supported by this file system (drop --direct)");
    }
    return Status::FromErrno(err, "open " + path);
  }
  for (size_t idx = 0; idx < fds_.size(); ++idx) {
    if (!fds_[idx].valid()) {
      fds_[idx] = UniqueFd(fd);
      return static_cast<int>(idx);
    }
  }
  fds_.emplace_back(fd);
  return static_cast<int>(fds_.size() - 1);
}

Status FdTable::Close(int handle) {
  if (handle < 0 || static_cast<size_t>(handle) >= fds_.size() || !fds_[handle].valid()) {
    return Status(StatusCode::kBadHandle, "close: bad handle");
  }
  return fds_[static_cast<size_t>(handle)].Close();
}

}  // namespace t0fs::bench
