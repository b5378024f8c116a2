#include "meta/store/sqlite/disk_reserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"

namespace t0fs::meta::sqlite {

bool DiskReserve::Refill(bool force) {
  if (size_ == 0) return false;
  // Rate-limited before any system call: while the reserve cannot be taken,
  // every write transaction asks again.
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_try_ < kRefillInterval) return held_;
  last_try_ = now;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_blocks) * 512 >= size_) {
    held_ = true;
    return true;
  }
  held_ = false;
  const std::string dir = path_.substr(0, path_.find_last_of('/') + 1);
  struct statvfs vfs {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &vfs) != 0) return false;
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (free_bytes < kRoomFactor * size_) return false;
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    LOG_WARN("metadata store: cannot create its disk reserve {}: {}", path_, std::strerror(errno));
    return false;
  }
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size_));
  ::close(fd);
  if (rc != 0) {
    LOG_WARN("metadata store: cannot allocate its disk reserve {} ({} bytes): {}", path_, size_,
             std::strerror(rc));
    ::unlink(path_.c_str());
    return false;
  }
  held_ = true;
  LOG_INFO("metadata store: {} bytes of disk kept in reserve for metadata writes ({})", size_,
           path_);
  return true;
}

bool DiskReserve::Release() {
  if (size_ == 0) return false;
  if (::unlink(path_.c_str()) != 0) {
    held_ = false;
    return false;
  }
  held_ = false;
  last_try_ = std::chrono::steady_clock::now();
  LOG_ERROR(
      "metadata store: its disk is full; released the {} bytes kept in reserve ({}) so that "
      "metadata writes (deletions that free space among them) go on. Free space on that file "
      "system: the reserve is taken again once {}× its size is free",
      size_, path_, kRoomFactor);
  return true;
}

}  // namespace t0fs::meta::sqlite
