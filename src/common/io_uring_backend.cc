#include <liburing.h>

#include <atomic>
#include <cerrno>

#include "common/io_backend.h"
#include "common/logging.h"

namespace t0fs {
namespace {

class UringBackend final : public IoBackend {
 public:
  explicit UringBackend(unsigned depth) : depth_(depth) {}
  ~UringBackend() override { io_uring_queue_exit(&ring_); }

  Status Init() {
    int rc = io_uring_queue_init(depth_, &ring_, 0);
    if (rc < 0) return Status::FromErrno(-rc, "io_uring_queue_init");
    return Status::Ok();
  }

  void Execute(std::span<IoRequest> requests) override {
    // Batches larger than the ring run in ring-sized slices.
    for (size_t start = 0; start < requests.size(); start += depth_) {
      size_t count = std::min<size_t>(depth_, requests.size() - start);
      ExecuteSlice(requests.subspan(start, count));
    }
  }

  std::string_view name() const override { return "io_uring"; }

 private:
  void ExecuteSlice(std::span<IoRequest> requests) {
    for (size_t idx = 0; idx < requests.size(); ++idx) {
      IoRequest& req = requests[idx];
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      switch (req.op) {
        case IoOp::kRead:
          io_uring_prep_read(sqe, req.fd, req.buf, static_cast<unsigned>(req.len), req.offset);
          break;
        case IoOp::kWrite:
          io_uring_prep_write(sqe, req.fd, req.buf, static_cast<unsigned>(req.len), req.offset);
          break;
        case IoOp::kFdatasync:
          io_uring_prep_fsync(sqe, req.fd, IORING_FSYNC_DATASYNC);
          break;
      }
      io_uring_sqe_set_data64(sqe, idx);
    }
    size_t pending = requests.size();
    int rc = 0;
    do {
      rc = io_uring_submit_and_wait(&ring_, static_cast<unsigned>(pending));
    } while (rc == -EINTR);
    if (rc < 0) {
      // Submission itself failed: nothing ran, report the error on every request.
      for (IoRequest& req : requests) req.result = rc;
      return;
    }
    while (pending > 0) {
      io_uring_cqe* cqe = nullptr;
      int wrc = io_uring_wait_cqe(&ring_, &cqe);
      if (wrc == -EINTR) continue;
      if (wrc < 0) {
        for (IoRequest& req : requests) req.result = wrc;
        return;
      }
      requests[io_uring_cqe_get_data64(cqe)].result = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      --pending;
    }
  }

  unsigned depth_;
  io_uring ring_{};
};

std::atomic<IoBackendKind> g_default_kind{IoBackendKind::kAuto};

}  // namespace

Result<std::unique_ptr<IoBackend>> MakeUringBackend(unsigned queue_depth) {
  auto backend = std::make_unique<UringBackend>(queue_depth);
  RETURN_IF_ERROR(backend->Init());
  return std::unique_ptr<IoBackend>(std::move(backend));
}

Result<IoBackendKind> ParseIoBackendKind(std::string_view text) {
  if (text == "auto") return IoBackendKind::kAuto;
  if (text == "io_uring" || text == "uring") return IoBackendKind::kUring;
  if (text == "psync") return IoBackendKind::kPsync;
  return Status(StatusCode::kInvalidArgument,
                std::string("unknown io backend '") + std::string(text) + "' (auto, io_uring, psync)");
}

void SetDefaultIoBackend(IoBackendKind kind) { g_default_kind = kind; }

IoBackend& ThreadIoBackend() {
  thread_local std::unique_ptr<IoBackend> backend;
  if (!backend) {
    IoBackendKind kind = g_default_kind.load();
    if (kind != IoBackendKind::kPsync) {
      auto uring = MakeUringBackend(64);
      if (uring.ok()) {
        backend = std::move(uring).value();
      } else {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
          LOG_WARN("io_uring unavailable ({}); using pread/pwrite", uring.status().ToString());
        }
      }
    }
    if (!backend) backend = MakePsyncBackend();
  }
  return *backend;
}

}  // namespace t0fs
