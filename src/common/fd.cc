#include "common/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace t0fs {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

Status UniqueFd::Close() {
  if (fd_ < 0) return Status::Ok();
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Status::FromErrno(errno, "close");
  return Status::Ok();
}

Result<UniqueFd> UniqueFd::Dup() const {
  int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "dup");
  return UniqueFd(fd);
}

}  // namespace t0fs
