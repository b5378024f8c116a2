#include "bench/stop_signal.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace t0fs::bench {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_watching{false};
std::mutex g_mu;  // guards nothing but pairs with g_cv (waits on g_signal)
std::condition_variable g_cv;

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

StopWatcher::StopWatcher() {
  sigset_t set = StopSet();
  // Blocked in main already; blocking here too keeps them queued for
  // sigtimedwait when a caller (a test) did not.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  g_watching.store(true);
  thread_ = std::thread([set] {
    // A short timeout so the destructor can end the thread; a signal is
    // taken at once whenever it comes.
    const timespec poll{0, 50 * 1000 * 1000};
    while (g_watching.load()) {
      int sig = sigtimedwait(&set, nullptr, &poll);
      if (sig > 0) RequestStop(sig);
    }
  });
}

StopWatcher::~StopWatcher() {
  g_watching.store(false);
  thread_.join();
}

void RequestStop(int signal) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    int expected = 0;
    g_signal.compare_exchange_strong(expected, signal);  // the first one wins
  }
  g_cv.notify_all();
}

void ResetStopForTest() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_signal.store(0);
}

bool StopRequested(std::chrono::milliseconds wait) {
  if (g_signal.load(std::memory_order_relaxed) != 0) return true;
  if (wait.count() <= 0) return false;
  std::unique_lock<std::mutex> lock(g_mu);
  return g_cv.wait_for(lock, wait, [] { return g_signal.load() != 0; });
}

bool SleepUnlessStopped(double seconds) {
  if (seconds <= 0) return !StopRequested();
  auto wait =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
  std::unique_lock<std::mutex> lock(g_mu);
  return !g_cv.wait_for(lock, wait, [] { return g_signal.load() != 0; });
}

int StopSignal() {
  return g_signal.load();
}

std::string StopSignalName() {
  switch (StopSignal()) {
    case 0:
      return "";
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(StopSignal());
  }
}

int StopExitCode() {
  return 128 + StopSignal();
}

}  // namespace t0fs::bench
