#include "common/service_notify.h"

#include <systemd/sd-daemon.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/logging.h"

namespace t0fs {
namespace {

void Send(const std::string& message) {
  int rc = ::sd_notify(0, message.c_str());
  if (rc < 0) LOG_WARN("sd_notify({}) failed: {}", message.substr(0, message.find('\n')), rc);
}

}  // namespace

void NotifyReady(std::string_view status) {
  Send("READY=1\nSTATUS=" + std::string(status));
}

void NotifyStopping(std::string_view status) {
  Send("STOPPING=1\nSTATUS=" + std::string(status));
}

void NotifyStatus(std::string_view status) {
  Send("STATUS=" + std::string(status));
}

struct Watchdog::State {
  std::function<bool()> alive;
  std::chrono::microseconds interval{0};
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;  // guarded by mu
  std::thread thread;
};

Watchdog::Watchdog(std::function<bool()> alive) : state_(std::make_unique<State>()) {
  uint64_t usec = 0;
  if (::sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
  state_->alive = std::move(alive);
  state_->interval = std::chrono::microseconds(usec / 2);
  state_->thread = std::thread([s = state_.get()] {
    std::unique_lock lock(s->mu);
    while (!s->stop) {
      lock.unlock();
      bool ok = !s->alive || s->alive();
      if (ok) {
        Send("WATCHDOG=1");
      } else {
        LOG_WARN("health check failed: no watchdog ping (systemd restarts this daemon if it persists)");
      }
      lock.lock();
      s->cv.wait_for(lock, s->interval, [s] { return s->stop; });
    }
  });
}

Watchdog::~Watchdog() {
  if (!state_->thread.joinable()) return;
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  state_->thread.join();
}

bool Watchdog::enabled() const {
  return state_->thread.joinable();
}

}  // namespace t0fs
