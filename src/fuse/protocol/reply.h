// Reply: the answer to one request, written to the /dev/fuse fd the request
// came from (a cloned fd only accepts replies to requests it read).
//
// A reply is OutHeader + payload in one writev(): the payload is never copied
// into a staging buffer (READ replies go straight from the buffer File::Read
// filled). A request is answered at most once; the second attempt is a bug
// and is dropped with a log line. Not thread-safe (one per request).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "common/status.h"

namespace t0fs::fuse {

// Where an answer goes instead of writev() on /dev/fuse: the ring entry of a
// request that came through FUSE over io_uring (uring.h). `iov[0]` is the
// OutHeader, `total` the bytes of all parts.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void Deliver(const iovec* iov, int count, size_t total) = 0;
};

class Reply {
 public:
  // `fd`: the /dev/fuse fd the request came from (or, for io_uring, the
  // connection's fd, used for ioctls); `sink`: the ring entry, if any.
  Reply(int fd, uint64_t unique, ReplySink* sink = nullptr) : fd_(fd), unique_(unique), sink_(sink) {}

  // Answers with an errno (positive, e.g. ENOENT). Out-of-range values are
  // sent as EIO (the kernel rejects errors outside (-1000, 0]).
  void Error(int err);
  // Answers with ToErrno(status.code()).
  void Fail(const Status& status);
  // Answers success with `value` as the payload.
  template <typename T>
  void Send(const T& value) {
    SendParts({std::as_bytes(std::span<const T, 1>(&value, 1))});
  }
  void SendBytes(std::span<const std::byte> payload) { SendParts({payload}); }
  // Answers success with the concatenation of up to 4 parts.
  void SendParts(std::initializer_list<std::span<const std::byte>> parts);
  void SendEmpty() { SendParts({}); }
  // Marks a no-reply request (FORGET) as handled.
  void NoReply() { done_ = true; }

  bool done() const { return done_; }
  int error() const { return error_; }  // errno sent (0 on success)
  uint64_t unique() const { return unique_; }
  // The /dev/fuse fd this reply goes to (for connection ioctls).
  int device() const { return fd_; }

 private:
  void Write(const iovec* iov, int count, size_t total, int error);

  int fd_;
  uint64_t unique_;
  ReplySink* sink_;
  bool done_ = false;
  int error_ = 0;
};

}  // namespace t0fs::fuse
