#include "fuse/protocol/reply.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"
#include "fuse/protocol/abi.h"

namespace t0fs::fuse {

void Reply::Error(int err) {
  if (err <= 0 || err >= 1000) err = EIO;
  abi::OutHeader header{sizeof(abi::OutHeader), -err, unique_};
  iovec iov{&header, sizeof(header)};
  Write(&iov, 1, sizeof(header), err);
}

void Reply::Fail(const Status& status) {
  int err = ToErrno(status.code());
  if (err == 0) err = EIO;  // an ok status is no failure; answering "ok" here would lie
  // What the errno cannot say; EIO is never expected, so it is a warning.
  if (err == EIO) {
    LOG_WARN("fuse: request {} failed: {}", unique_, status.ToString());
  } else {
    LOG_DEBUG("fuse: request {} failed: {}", unique_, status.ToString());
  }
  Error(err);
}

void Reply::SendParts(std::initializer_list<std::span<const std::byte>> parts) {
  abi::OutHeader header{0, 0, unique_};
  iovec iov[5];
  int count = 0;
  iov[count++] = {&header, sizeof(header)};
  size_t total = sizeof(header);
  for (const auto& part : parts) {
    if (count == 5) break;  // callers pass at most 4; see header
    if (part.empty()) continue;
    iov[count++] = {const_cast<std::byte*>(part.data()), part.size()};
    total += part.size();
  }
  header.len = static_cast<uint32_t>(total);
  Write(iov, count, total, 0);
}

void Reply::Write(const iovec* iov, int count, size_t total, int error) {
  if (done_) {
    LOG_ERROR("fuse: second reply to request {} dropped", unique_);
    return;
  }
  done_ = true;
  error_ = error;
  if (sink_ != nullptr) {
    sink_->Deliver(iov, count, total);
    return;
  }
  ssize_t n;
  do {
    n = ::writev(fd_, iov, count);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    // ENOENT: the request is gone (interrupted and abandoned by its caller, or
    // the connection was aborted); nothing is waiting for this answer.
    if (errno == ENOENT || errno == ENODEV) {
      LOG_DEBUG("fuse: reply to {} not delivered: {}", unique_, std::strerror(errno));
    } else {
      LOG_WARN("fuse: reply to {} ({} bytes) failed: {}", unique_, total, std::strerror(errno));
    }
  }
}

}  // namespace t0fs::fuse
