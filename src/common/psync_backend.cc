#include <unistd.h>

#include <cerrno>

#include "common/io_backend.h"

namespace t0fs {
namespace {

class PsyncBackend final : public IoBackend {
 public:
  void Execute(std::span<IoRequest> requests) override {
    for (IoRequest& req : requests) {
      ssize_t n = 0;
      do {
        switch (req.op) {
          case IoOp::kRead:
            n = ::pread(req.fd, req.buf, req.len, static_cast<off_t>(req.offset));
            break;
          case IoOp::kWrite:
            n = ::pwrite(req.fd, req.buf, req.len, static_cast<off_t>(req.offset));
            break;
          case IoOp::kFdatasync:
            n = ::fdatasync(req.fd);
            break;
        }
      } while (n < 0 && errno == EINTR);
      req.result = n < 0 ? -errno : n;
    }
  }
  std::string_view name() const override { return "psync"; }
};

}  // namespace

std::unique_ptr<IoBackend> MakePsyncBackend() { return std::make_unique<PsyncBackend>(); }

Result<size_t> PreadFull(int fd, std::byte* buf, size_t len, uint64_t offset) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pread");
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Status PwriteFull(int fd, const std::byte* buf, size_t len, uint64_t offset) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pwrite(fd, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pwrite");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace t0fs
