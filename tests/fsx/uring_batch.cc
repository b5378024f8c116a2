#include "uring_batch.h"

#include <fmt/format.h>

#include <vector>

#include "pattern.h"

namespace t0fs::fsx {

namespace {
constexpr unsigned kQueueDepth = 16;  // a batch is at most 8 I/Os and an fsync
constexpr uint64_t kFsyncTag = ~uint64_t{0};
}  // namespace

Ring::~Ring() {
  if (ready_) io_uring_queue_exit(&ring_);
}

int Ring::Init() {
  int rc = io_uring_queue_init(kQueueDepth, &ring_, 0);
  if (rc < 0) return -rc;
  ready_ = true;
  return 0;
}

std::optional<Failure> Ring::RunBatch(int fd, const Op& op, Model& model) {
  std::vector<std::vector<uint8_t>> buffers(op.batch.size());
  for (size_t io_idx = 0; io_idx < op.batch.size(); ++io_idx) {
    const UringIo& io = op.batch[io_idx];
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return Fail("io_uring: no free SQE (tool bug)");
    buffers[io_idx].resize(io.length);
    if (io.write) {
      FillPattern(op.step, io.offset, buffers[io_idx]);
      io_uring_prep_write(sqe, fd, buffers[io_idx].data(), io.length, io.offset);
    } else {
      io_uring_prep_read(sqe, fd, buffers[io_idx].data(), io.length, io.offset);
    }
    io_uring_sqe_set_data64(sqe, io_idx);
  }
  unsigned expected = op.batch.size();
  if (op.flag) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return Fail("io_uring: no free SQE (tool bug)");
    io_uring_prep_fsync(sqe, fd, 0);
    io_uring_sqe_set_data64(sqe, kFsyncTag);
    ++expected;
  }
  int submitted = io_uring_submit(&ring_);
  if (submitted < 0) return SyscallFailure("io_uring_submit", -submitted);
  if (static_cast<unsigned>(submitted) != expected) {
    return Fail(fmt::format("io_uring_submit took {} of {} SQEs", submitted, expected));
  }

  // Collect every completion before judging, so that nothing is left in the ring.
  std::vector<int> results(op.batch.size(), 0);
  int fsync_result = 0;
  for (unsigned done = 0; done < expected;) {
    io_uring_cqe* cqe = nullptr;
    int rc = io_uring_wait_cqe(&ring_, &cqe);
    if (rc == -EINTR) continue;  // our wait was interrupted, not the I/O
    if (rc < 0) return SyscallFailure("io_uring_wait_cqe", -rc);
    uint64_t tag = io_uring_cqe_get_data64(cqe);
    if (tag == kFsyncTag) {
      fsync_result = cqe->res;
    } else {
      results[tag] = cqe->res;
    }
    io_uring_cqe_seen(&ring_, cqe);
    ++done;
  }

  if (fsync_result < 0) return SyscallFailure("io_uring fsync", -fsync_result);
  for (size_t io_idx = 0; io_idx < op.batch.size(); ++io_idx) {
    const UringIo& io = op.batch[io_idx];
    const std::string what = fmt::format("io_uring {} #{} 0x{:x} len 0x{:x}",
                                         io.write ? "write" : "read", io_idx, io.offset, io.length);
    if (results[io_idx] < 0) return SyscallFailure(what, -results[io_idx]);
    if (static_cast<uint64_t>(results[io_idx]) != io.length) {
      // Reads lie inside the file (generator.cc), so a short one is not at EOF.
      return Fail(fmt::format("{}: short {}: {} bytes", what, io.write ? "write" : "read",
                              results[io_idx]));
    }
    if (!io.write) {
      if (auto failure =
              CompareBytes(what, io.offset, model.Read(io.offset, io.length), buffers[io_idx])) {
        return failure;
      }
    }
  }
  // The ranges do not overlap, so the order of the writes does not matter.
  for (size_t io_idx = 0; io_idx < op.batch.size(); ++io_idx) {
    if (op.batch[io_idx].write) model.Write(op.batch[io_idx].offset, buffers[io_idx]);
  }
  return std::nullopt;
}

}  // namespace t0fs::fsx
