#include "fuse/protocol/session.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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
  s->stop_event_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!s->stop_event_.valid()) return Status::FromErrno(errno, "eventfd for the FUSE workers");
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
  // Non-blocking: a worker polls its fd and the stop event together.
  for (UniqueFd& fd : s->fds_) {
    int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl | O_NONBLOCK) != 0) {
      return Status::FromErrno(errno, "make /dev/fuse non-blocking");
    }
  }
  // Room for the largest request: header + WriteIn + max_write, plus slack for
  // SETXATTR names; never below the kernel's minimum.
  const size_t request_size =
      std::max<size_t>(options.max_write + kPageSize, abi::kMinReadBuffer);
  for (size_t i = 0; i < threads; ++i) {
    s->contexts_.push_back(std::make_unique<WorkerContext>(i, request_size, options.reply_buffer));
  }
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
  uint64_t one = 1;
  // The counter stays non-zero: every worker's poll sees it.
  if (::write(stop_event_.get(), &one, sizeof one) != sizeof one) {
    LOG_ERROR("fuse: waking the workers: {}", std::strerror(errno));
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
  try {
    WorkerLoop(index);
  } catch (const std::exception& e) {
    LOG_ERROR("fuse: worker {} died: {}", index, e.what());
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = Status(StatusCode::kInternal, e.what());
    alive_.fetch_sub(1);
  }
}

void Session::WorkerLoop(size_t index) {
  const int fd = fds_[std::min(index, fds_.size() - 1)].get();
  WorkerContext& ctx = *contexts_[index];
  const std::span<std::byte> area = ctx.request_area();
  // The worker sleeps in epoll on its /dev/fuse fd (EPOLLEXCLUSIVE: one idle
  // worker is woken per request, as a blocking read would) and the stop
  // event (every worker is woken).
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event dev_event{};
  dev_event.events = EPOLLIN | EPOLLEXCLUSIVE;
  epoll_event stop_event{};
  stop_event.events = EPOLLIN;
  if (!epoll.valid() || ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &dev_event) != 0 ||
      ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, stop_event_.get(), &stop_event) != 0) {
    LOG_ERROR("fuse: worker {} epoll: {}", index, std::strerror(errno));
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = Status::FromErrno(errno, "epoll for /dev/fuse");
    alive_.fetch_sub(1);
    return;
  }
  for (;;) {
    if (stopping_.load()) break;
    ssize_t n = ::read(fd, area.data(), area.size());
    if (n < 0) {
      int err = errno;
      if (err == EAGAIN) {
        // No request queued: sleep until one comes or Stop() is called.
        epoll_event ready[2];
        if (::epoll_wait(epoll.get(), ready, 2, -1) < 0 && errno != EINTR) {
          LOG_ERROR("fuse: worker {} epoll_wait: {}", index, std::strerror(errno));
          std::lock_guard lock(mu_);
          if (error_.ok()) error_ = Status::FromErrno(errno, "epoll_wait /dev/fuse");
          break;
        }
        continue;
      }
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
  alive_.fetch_sub(1);
}

}  // namespace t0fs::fuse
