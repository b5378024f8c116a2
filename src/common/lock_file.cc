#include "common/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

namespace t0fs {

Result<LockFile> LockFile::Acquire(const std::string& path, const std::string& what) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::FromErrno(errno, "open lock file " + path);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return Status::FromErrno(errno, "lock " + path);
    char buf[32] = {};
    ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return Status(StatusCode::kBusy, fmt::format("{} is in use by another process (pid {})", what, holder));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) == 0) (void)!::pwrite(fd.get(), pid.data(), pid.size(), 0);
  return LockFile(std::move(fd));
}

}  // namespace t0fs
