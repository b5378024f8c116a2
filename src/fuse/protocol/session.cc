#include "fuse/protocol/session.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"
#include "fuse/protocol/block_signals.h"

namespace t0fs::fuse {
namespace {

Result<UniqueFd> CloneDevice(int master) {
  UniqueFd clone(::open("/dev/fuse", O_RDWR | O_CLOEXEC));
  if (!clone.valid()) return Status::FromErrno(errno, "open /dev/fuse for a worker");
  uint32_t master_fd = static_cast<uint32_t>(master);
  if (::ioctl(clone.get(), abi::kDevIocClone, &master_fd) != 0) {
    return Status::FromErrno(errno, "FUSE_DEV_IOC_CLONE");
  }
  return clone;
}

}  // namespace

Session::Session(RequestHandler& handler, const SessionOptions& options)
    : options_(options),
      processor_(handler, std::max<size_t>(options.threads, 1) + options.extra_slots, options.proto_minor,
                 options.trace, options.metrics) {}

Result<std::unique_ptr<Session>> Session::Start(UniqueFd device, RequestHandler& handler,
                                                const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(handler, options));
  const size_t threads = std::max<size_t>(options.threads, 1);
  const int master = device.get();
  s->fds_.push_back(std::move(device));
  bool shared = false;
  for (size_t i = 1; i < threads; ++i) {
    auto clone = CloneDevice(master);
    if (!clone.ok()) {
      // Old kernels: all workers share the one fd (one processing queue).
      LOG_WARN("fuse: {}; workers share one /dev/fuse fd", clone.status().ToString());
      shared = true;
      break;
    }
    s->fds_.push_back(std::move(*clone));
  }
  // Blocking: a worker sleeps in read (Stop cancels it there).
  for (UniqueFd& fd : s->fds_) {
    int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ((fl & O_NONBLOCK) != 0 && ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0)) {
      return Status::FromErrno(errno, "make /dev/fuse blocking");
    }
  }
  // Room for the largest request: header + WriteIn + max_write, plus slack for
  // SETXATTR names; never below the kernel's minimum.
  const size_t request_size =
      std::max<size_t>(options.max_write + kPageSize, abi::kMinReadBuffer);
  for (size_t i = 0; i < threads; ++i) {
    s->contexts_.push_back(std::make_unique<WorkerContext>(i, request_size, options.reply_buffer));
  }
  s->exited_.assign(threads, false);
  {
    BlockAsyncSignals blocked;
    s->alive_.store(threads);
    for (size_t i = 0; i < threads; ++i) {
      s->threads_.emplace_back([session = s.get(), i] { session->WorkerMain(i); });
    }
  }
  if (shared) LOG_DEBUG("fuse: {} workers on a shared fd", threads);
  return s;
}

Session::~Session() { Join(); }

void Session::Stop() {
  stopping_.store(true);
  // A worker takes a cancel only in its read of /dev/fuse (its cancel state
  // is disabled elsewhere): one sleeping there leaves now, one serving a
  // request leaves at its next read, or sees stopping_ before it.
  std::lock_guard lock(exit_mu_);
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (!exited_[i]) ::pthread_cancel(threads_[i].native_handle());
  }
}

void Session::Join() {
  std::lock_guard lock(join_mu_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void Session::CloseDevices() {
  std::lock_guard lock(join_mu_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  // Workers are gone: nobody reads fds_ any more.
  for (auto& fd : fds_) (void)fd.Close();
}

Status Session::status() const {
  std::lock_guard lock(mu_);
  return error_;
}

void Session::WorkerMain(size_t index) {
  // Cancels (Stop) are taken only in the read of /dev/fuse, never while a
  // request is served.
  ::pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
  // However the worker leaves (returned, threw, cancelled: the unwind runs
  // this), Stop must not cancel it any more: once it has returned it may be
  // joined and its handle freed.
  struct Exit {
    Session& s;
    size_t index;
    ~Exit() {
      std::lock_guard lock(s.exit_mu_);
      s.exited_[index] = true;
      s.alive_.fetch_sub(1);
    }
  } exit{*this, index};
  try {
    WorkerLoop(index);
  } catch (const std::exception& e) {
    LOG_ERROR("fuse: worker {} died: {}", index, e.what());
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = Status(StatusCode::kInternal, e.what());
  }
}

void Session::WorkerLoop(size_t index) {
  const int fd = fds_[std::min(index, fds_.size() - 1)].get();
  WorkerContext& ctx = *contexts_[index];
  const std::span<std::byte> area = ctx.request_area();
  // A blocking read: one system call per request (a non-blocking fd polled
  // with a stop event took three when the queue was empty: the read that
  // found nothing, epoll_wait, the read). Idle workers sleep in the read,
  // one woken per request.
  for (;;) {
    if (stopping_.load()) break;
    ::pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);
    ssize_t n = ::read(fd, area.data(), area.size());
    const int err = errno;
    ::pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
    if (n < 0) {
      // EINTR: a signal; ENOENT: the request was aborted between wake-up
      // and copy.
      if (err == EINTR || err == ENOENT) continue;
      if (err == ENODEV || err == ECONNABORTED) {
        ended_.store(true);
      } else {
        LOG_ERROR("fuse: worker {} read: {}", index, std::strerror(err));
        std::lock_guard lock(mu_);
        if (error_.ok()) error_ = Status::FromErrno(err, "read /dev/fuse");
      }
      break;
    }
    const std::span<const std::byte> bytes = area.first(size_t(n));
    processor_.Process(bytes, fd, ctx);
  }
}

}  // namespace t0fs::fuse
