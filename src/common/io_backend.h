// IoBackend: the one interface for disk I/O in daemons and the client.
//
// A request is plain data; each backend translates it in one place
// (io_uring_backend.cc, psync_backend.cc). Execute() is synchronous for the
// caller but lets io_uring run a batch (e.g. a chunk's data and checksum
// reads) in one system call.
//
// Thread safety: a backend instance belongs to one thread (rings are not
// shared); use ThreadIoBackend() to get the calling thread's instance.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/status.h"

namespace t0fs {

enum class IoOp : uint8_t { kRead, kWrite, kFdatasync };

struct IoRequest {
  IoOp op = IoOp::kRead;
  int fd = -1;
  uint64_t offset = 0;
  std::byte* buf = nullptr;  // for kWrite the data is only read
  size_t len = 0;
  // Set by Execute(): bytes transferred (may be short: at EOF, or a short
  // write the caller must continue) or -errno.
  ssize_t result = 0;
};

enum class IoBackendKind : uint8_t { kAuto, kUring, kPsync };

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  virtual void Execute(std::span<IoRequest> requests) = 0;
  virtual std::string_view name() const = 0;
};

std::unique_ptr<IoBackend> MakePsyncBackend();
// Fails when the kernel refuses io_uring (disabled, seccomp, old kernel).
Result<std::unique_ptr<IoBackend>> MakeUringBackend(unsigned queue_depth);

Result<IoBackendKind> ParseIoBackendKind(std::string_view text);
// Process-wide choice for ThreadIoBackend(); set once at start-up.
void SetDefaultIoBackend(IoBackendKind kind);
// The calling thread's backend (created on first use; kAuto falls back to
// psync when io_uring is unavailable, logged once).
IoBackend& ThreadIoBackend();

// Reads until `len` bytes or EOF, retrying EINTR and short reads. Returns the
// number of bytes read (less than len only at EOF).
Result<size_t> PreadFull(int fd, std::byte* buf, size_t len, uint64_t offset);
// Writes all `len` bytes, retrying EINTR and short writes.
Status PwriteFull(int fd, const std::byte* buf, size_t len, uint64_t offset);

}  // namespace t0fs
