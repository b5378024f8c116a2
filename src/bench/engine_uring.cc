// io_uring: up to `depth` requests in flight per thread, on registered
// (fixed) page-aligned buffers and registered files.
#include <liburing.h>
#include <sys/uio.h>

#include <cerrno>
#include <vector>

#include "bench/engine.h"
#include "bench/engine_files.h"
#include "common/buffer.h"

namespace t0fs::bench {
namespace {

constexpr unsigned kMaxFiles = 1024;

class UringEngine final : public Engine {
 public:
  explicit UringEngine(const EngineOptions& options)
      : depth_(options.depth),
        slot_size_(AlignUp(options.buffer_size == 0 ? kPageSize : options.buffer_size, kPageSize)),
        slots_(options.depth) {}
  ~UringEngine() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }

  Status Init() {
    // One thread submits and reaps: let the kernel skip cross-task wakeups
    // (as fio does); older kernels refuse the flags, then plain setup.
    unsigned entries = depth_ < 4 ? 4 : depth_;
    int rc = io_uring_queue_init(entries, &ring_,
                                 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &ring_, 0);
    if (rc < 0) return Status::FromErrno(-rc, "io_uring_queue_init (is io_uring disabled?)");
    ring_ready_ = true;
    buffers_ = AlignedBuffer(slot_size_ * depth_);
    std::vector<iovec> iovs(depth_);
    for (uint32_t slot = 0; slot < depth_; ++slot) {
      iovs[slot] = {buffers_.data() + slot * slot_size_, slot_size_};
    }
    // Fixed buffers save the per-I/O page pinning; without the memlock
    // rights they fall back to plain buffers.
    fixed_buffers_ = io_uring_register_buffers(&ring_, iovs.data(), depth_) == 0;
    fixed_files_ = io_uring_register_files_sparse(&ring_, kMaxFiles) == 0;
    return Status::Ok();
  }

  Result<int> Open(const std::string& path, const OpenMode& mode) override {
    ASSIGN_OR_RETURN(int handle, files_.Open(path, mode));
    if (fixed_files_ && static_cast<unsigned>(handle) < kMaxFiles) {
      int fd = files_.fd(handle);
      if (io_uring_register_files_update(&ring_, static_cast<unsigned>(handle), &fd, 1) != 1) {
        return Status(StatusCode::kIoError, "io_uring: cannot register " + path);
      }
    }
    return handle;
  }
  Status Fsync(int handle) override {
    if (::fsync(files_.fd(handle)) != 0) return Status::FromErrno(errno, "fsync");
    return Status::Ok();
  }
  Status Close(int handle) override {
    if (fixed_files_ && static_cast<unsigned>(handle) < kMaxFiles) {
      int none = -1;
      (void)io_uring_register_files_update(&ring_, static_cast<unsigned>(handle), &none, 1);
    }
    return files_.Close(handle);
  }
  uint32_t depth() const override { return depth_; }
  std::span<std::byte> Buffer(uint32_t slot) override {
    return {buffers_.data() + slot * slot_size_, slot_size_};
  }

  Status Submit(uint32_t slot, int handle, IoDir dir, uint64_t offset, size_t len) override {
    slots_[slot] = {handle, dir, offset, len, 0};
    Queue(slot);
    return Status::Ok();
  }

  Result<size_t> Reap(std::span<Completion> out, size_t min) override {
    size_t got = 0;
    while (got < out.size()) {
      int rc = io_uring_submit_and_wait(&ring_, got < min ? 1 : 0);
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        return Status::FromErrno(-rc, "io_uring_submit_and_wait");
      }
      io_uring_cqe* cqes[64];
      unsigned count = io_uring_peek_batch_cqe(&ring_, cqes, 64);
      for (unsigned idx = 0; idx < count; ++idx) {
        auto slot = static_cast<uint32_t>(io_uring_cqe_get_data64(cqes[idx]));
        int res = cqes[idx]->res;
        SlotState& st = slots_[slot];
        if (res == -EAGAIN || res == -EINTR) {
          Queue(slot);  // retried transparently
        } else if (res < 0) {
          out[got++] = {slot, res};
        } else if (res > 0 && st.done + static_cast<size_t>(res) < st.len) {
          st.done += static_cast<size_t>(res);  // short: continue the rest
          Queue(slot);
        } else {
          st.done += static_cast<size_t>(res);
          out[got++] = {slot, static_cast<int64_t>(st.done)};
        }
        if (got == out.size()) {
          io_uring_cq_advance(&ring_, idx + 1);
          return got;
        }
      }
      io_uring_cq_advance(&ring_, count);
      if (got >= min && count == 0) break;
      if (got >= min && io_uring_cq_ready(&ring_) == 0) break;
    }
    return got;
  }
  std::string_view name() const override { return "io_uring"; }

 private:
  struct SlotState {
    int handle = -1;
    IoDir dir = IoDir::kRead;
    uint64_t offset = 0;
    size_t len = 0;
    size_t done = 0;
  };

  void Queue(uint32_t slot) {
    SlotState& st = slots_[slot];
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // the ring is sized to depth; flush and retry
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    std::byte* buf = buffers_.data() + slot * slot_size_ + st.done;
    auto len = static_cast<unsigned>(st.len - st.done);
    uint64_t offset = st.offset + st.done;
    bool fixed_file = fixed_files_ && static_cast<unsigned>(st.handle) < kMaxFiles;
    int fd = fixed_file ? st.handle : files_.fd(st.handle);
    if (st.dir == IoDir::kRead) {
      if (fixed_buffers_) {
        io_uring_prep_read_fixed(sqe, fd, buf, len, offset, static_cast<int>(slot));
      } else {
        io_uring_prep_read(sqe, fd, buf, len, offset);
      }
    } else {
      if (fixed_buffers_) {
        io_uring_prep_write_fixed(sqe, fd, buf, len, offset, static_cast<int>(slot));
      } else {
        io_uring_prep_write(sqe, fd, buf, len, offset);
      }
    }
    if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, slot);
  }

  uint32_t depth_;
  size_t slot_size_;
  io_uring ring_{};
  bool ring_ready_ = false;
  bool fixed_buffers_ = false;
  bool fixed_files_ = false;
  AlignedBuffer buffers_;
  FdTable files_;
  std::vector<SlotState> slots_;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeUringEngine(const EngineOptions& options) {
  auto engine = std::make_unique<UringEngine>(options);
  RETURN_IF_ERROR(engine->Init());
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace t0fs::bench
