#include "fuse/protocol/uring.h"

#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <string>

#include "common/buffer.h"
#include "common/logging.h"
#include "fuse/protocol/block_signals.h"
#include "fuse/protocol/abi.h"
#include "fuse/protocol/uring_abi.h"

namespace t0fs::fuse {
namespace {

constexpr uint64_t kStopTag = ~uint64_t{0};  // user_data of the stop-event poll
constexpr uint64_t kEntryTag = 1;            // user_data of the entry's commands

// "0-63", "0,2-3": the number of CPUs the kernel may ever run (its queues).
size_t PossibleCpus() {
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string text;
  std::getline(in, text);
  size_t count = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string range = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    unsigned a = 0, b = 0;
    if (std::sscanf(range.c_str(), "%u-%u", &a, &b) == 2 && b >= a) {
      count += b - a + 1;
    } else if (std::sscanf(range.c_str(), "%u", &a) == 1) {
      count += 1;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return count > 0 ? count : std::max<long>(::sysconf(_SC_NPROCESSORS_CONF), 1);
}

// Where an answer goes: the entry's header (OutHeader) and payload buffer.
class RingReplySink final : public ReplySink {
 public:
  RingReplySink(abi::UringReqHeader* header, std::span<std::byte> payload)
      : header_(header), payload_(payload) {}

  void Deliver(const iovec* iov, int count, size_t total) override {
    abi::OutHeader out{};
    std::memcpy(&out, iov[0].iov_base, sizeof out);
    size_t len = total - sizeof out;
    if (len > payload_.size()) {
      LOG_ERROR("fuse: answer to {} ({} bytes) exceeds the ring entry's {} bytes", out.unique, len,
                payload_.size());
      out.error = -EIO;
      len = 0;
    } else {
      size_t at = 0;
      for (int i = 1; i < count; ++i) {
        // A READ answered from the payload buffer itself needs no copy.
        if (iov[i].iov_base != payload_.data() + at) {
          std::memmove(payload_.data() + at, iov[i].iov_base, iov[i].iov_len);
        }
        at += iov[i].iov_len;
      }
    }
    out.len = static_cast<uint32_t>(sizeof out + len);
    std::memcpy(header_->in_out, &out, sizeof out);
    header_->ring_ent_in_out.payload_sz = static_cast<uint32_t>(len);
    delivered_ = true;
  }

  bool delivered() const { return delivered_; }
  void Reset() { delivered_ = false; }

 private:
  abi::UringReqHeader* header_;
  std::span<std::byte> payload_;
  bool delivered_ = false;
};

}  // namespace

struct UringQueues::Worker {
  Worker(size_t q, size_t slot, const UringOptions& o)
      : qid(q),
        header(kPageSize),
        // The payload is received at kPageSize: the InHeader and the fixed
        // arguments are put right before it, so the request is contiguous
        // and a WRITE's data stays page-aligned (O_DIRECT chunk writes).
        area(kPageSize + o.payload_size),
        context(slot, 0, o.reply_buffer) {}

  abi::UringReqHeader* hdr() { return reinterpret_cast<abi::UringReqHeader*>(header.span().data()); }
  std::span<std::byte> payload() { return area.span().subspan(kPageSize); }

  size_t qid;
  AlignedBuffer header;
  AlignedBuffer area;
  WorkerContext context;
  io_uring ring{};
  bool ring_ready = false;
  iovec iov[2]{};
  // Start handshake: the thread says whether its registration was taken.
  enum class State { kStarting, kRegistered, kFailed };
  std::atomic<State> state{State::kStarting};
};

size_t UringQueueCount() { return PossibleCpus(); }

size_t UringThreads(const UringOptions& options) {
  return UringQueueCount() * std::max<size_t>(options.threads_per_queue, 1);
}

namespace {

void PrepareCommand(io_uring_sqe* sqe, int device, uint32_t cmd_op, uint16_t qid, uint64_t commit_id) {
  std::memset(sqe, 0, 128);  // a 128-byte SQE: the command lives in its second half
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = device;
  sqe->cmd_op = cmd_op;
  io_uring_sqe_set_data64(sqe, kEntryTag);
  auto* cmd = reinterpret_cast<abi::UringCmdReq*>(sqe->cmd);
  cmd->qid = qid;
  cmd->commit_id = commit_id;
}

}  // namespace

UringQueues::UringQueues(RequestProcessor& processor, int device) : processor_(processor), device_(device) {}

Result<std::unique_ptr<UringQueues>> UringQueues::Start(int device, RequestProcessor& processor,
                                                         const UringOptions& options) {
  std::unique_ptr<UringQueues> q(new UringQueues(processor, device));
  q->queues_ = UringQueueCount();
  q->stop_event_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!q->stop_event_.valid()) return Status::FromErrno(errno, "eventfd for the io_uring queues");
  const size_t per_queue = std::max<size_t>(options.threads_per_queue, 1);
  size_t slot = options.first_slot;
  for (size_t qid = 0; qid < q->queues_; ++qid) {
    for (size_t t = 0; t < per_queue; ++t) q->workers_.push_back(std::make_unique<Worker>(qid, slot++, options));
  }
  for (auto& w : q->workers_) {
    io_uring_params params{};
    params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
    int rc = io_uring_queue_init_params(4, &w->ring, &params);
    if (rc < 0) return Status::FromErrno(-rc, "io_uring for FUSE (SQE128|CQE32)");
    w->ring_ready = true;
  }
  {
    BlockAsyncSignals blocked;  // the threads inherit the mask
    for (auto& w : q->workers_) {
      q->threads_.emplace_back([queues = q.get(), worker = w.get()] { queues->Run(*worker); });
    }
  }
  {
    std::unique_lock lock(q->start_mu_);
    q->start_cv_.wait(lock, [&] {
      for (auto& w : q->workers_) {
        if (w->state.load() == Worker::State::kStarting) return false;
      }
      return true;
    });
  }
  for (auto& w : q->workers_) {
    if (w->state.load() == Worker::State::kFailed) {
      Status st = q->status();
      q->Stop();
      q->Join();
      return st.ok() ? Status(StatusCode::kIoError, "FUSE io_uring registration failed") : st;
    }
  }
  return q;
}

UringQueues::~UringQueues() {
  Stop();
  Join();
  for (auto& w : workers_) {
    if (w->ring_ready) io_uring_queue_exit(&w->ring);
  }
}

void UringQueues::Stop() {
  uint64_t one = 1;
  if (stop_event_.valid() && ::write(stop_event_.get(), &one, sizeof one) != sizeof one) {
    LOG_ERROR("fuse: waking the io_uring queues: {}", std::strerror(errno));
  }
}

void UringQueues::Join() {
  std::lock_guard lock(join_mu_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

Status UringQueues::status() const {
  std::lock_guard lock(mu_);
  return error_;
}

void UringQueues::Fail(const Status& st) {
  std::lock_guard lock(mu_);
  if (error_.ok()) error_ = st;
}

void UringQueues::Run(Worker& w) {
  auto report = [&](Worker::State s) {
    std::lock_guard lock(start_mu_);
    w.state.store(s);
    start_cv_.notify_all();
  };
  io_uring& ring = w.ring;
  abi::UringReqHeader* hdr = w.hdr();
  const std::span<std::byte> payload = w.payload();
  w.iov[0] = {hdr, sizeof(abi::UringReqHeader)};
  w.iov[1] = {payload.data(), payload.size()};

  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  if (sqe == nullptr) {
    Fail(Status(StatusCode::kInternal, "no SQE in a new ring"));
    report(Worker::State::kFailed);
    return;
  }
  io_uring_prep_poll_add(sqe, stop_event_.get(), POLLIN);
  io_uring_sqe_set_data64(sqe, kStopTag);
  uint32_t last_cmd = abi::kUringCmdRegister;
  uint64_t commit_id = 0;
  auto submit_entry = [&] {
    io_uring_sqe* e = io_uring_get_sqe(&ring);
    if (e == nullptr) return -EBUSY;  // one command and one poll in a 4-entry ring: cannot happen
    PrepareCommand(e, device_, last_cmd, static_cast<uint16_t>(w.qid), commit_id);
    if (last_cmd == abi::kUringCmdRegister) {
      e->addr = reinterpret_cast<uint64_t>(w.iov);
      e->len = 2;
    }
    return io_uring_submit(&ring);
  };
  int rc = submit_entry();
  if (rc < 0) {
    Fail(Status::FromErrno(-rc, "io_uring_submit (FUSE register)"));
    report(Worker::State::kFailed);
    return;
  }
  // A refused registration completes at once; a taken one waits for a request.
  io_uring_cqe* cqe = nullptr;
  if (io_uring_peek_cqe(&ring, &cqe) == 0 && cqe != nullptr && io_uring_cqe_get_data64(cqe) == kEntryTag &&
      cqe->res < 0) {
    Fail(Status::FromErrno(-cqe->res, "FUSE_IO_URING_CMD_REGISTER"));
    report(Worker::State::kFailed);
    return;
  }
  report(Worker::State::kRegistered);

  RingReplySink sink(hdr, payload);
  for (;;) {
    rc = io_uring_wait_cqe(&ring, &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0) {
      Fail(Status::FromErrno(-rc, "io_uring_wait_cqe (FUSE)"));
      break;
    }
    const uint64_t tag = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    if (tag == kStopTag) break;
    if (res == -EINTR || res == -EAGAIN) {
      submit_entry();  // the kernel asks to send the command again
      continue;
    }
    if (res == -ENOTCONN || res == -ENODEV || res == -ECANCELED) {
      ended_.store(true);
      break;
    }
    if (res < 0) {
      LOG_ERROR("fuse: io_uring queue {}: {}", w.qid, std::strerror(-res));
      Fail(Status::FromErrno(-res, "FUSE io_uring command"));
      break;
    }
    // A request: InHeader + fixed arguments (op_in) + payload, rebuilt in
    // front of the payload as /dev/fuse would deliver it.
    abi::InHeader in{};
    std::memcpy(&in, hdr->in_out, sizeof in);
    commit_id = hdr->ring_ent_in_out.commit_id;
    const size_t payload_size = hdr->ring_ent_in_out.payload_sz;
    const size_t fixed = in.len >= sizeof in + payload_size ? in.len - sizeof in - payload_size : ~size_t{0};
    sink.Reset();
    if (fixed > abi::kUringOpInOutSize || payload_size > payload.size()) {
      LOG_ERROR("fuse: io_uring request {} (opcode {}) with len {} and payload {}: malformed", in.unique,
                in.opcode, in.len, payload_size);
      Reply(device_, in.unique, &sink).Error(EIO);
    } else {
      std::byte* start = payload.data() - sizeof in - fixed;
      std::memcpy(start, &in, sizeof in);
      std::memcpy(start + sizeof in, hdr->op_in, fixed);
      requests_.fetch_add(1, std::memory_order_relaxed);
      processor_.Process(std::span<const std::byte>(start, sizeof in + fixed + payload_size), device_,
                         w.context, &sink);
      if (!sink.delivered()) Reply(device_, in.unique, &sink).Error(EIO);  // every entry is committed
    }
    last_cmd = abi::kUringCmdCommitAndFetch;
    rc = submit_entry();
    if (rc < 0) {
      Fail(Status::FromErrno(-rc, "io_uring_submit (FUSE commit)"));
      break;
    }
  }
}

}  // namespace t0fs::fuse
