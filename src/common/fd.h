// UniqueFd: a move-only owner of a file descriptor.
#pragma once

#include <utility>

#include "common/status.h"

namespace t0fs {

// Owns one fd; closes it on destruction (errors there are ignored: call
// Close() where the result matters, e.g. after writing a file). Not
// thread-safe; no implicit conversion to int.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership without closing.
  int Release() { return std::exchange(fd_, -1); }
  Status Close();
  // A dup() of the descriptor (same open file description).
  Result<UniqueFd> Dup() const;

 private:
  int fd_ = -1;
};

}  // namespace t0fs
