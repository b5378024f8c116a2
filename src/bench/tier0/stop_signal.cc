#include "bench/tier0/stop_signal.h"

#include <signal.h>

#include <cerrno>

namespace t0fs::bench::tier0 {
namespace {
int g_stop_signal = 0;
}

bool StopRequested(std::chrono::milliseconds wait) {
  if (g_stop_signal != 0) return true;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  // Blocked in main; if a caller unblocked them, block here so they queue.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  timespec timeout{static_cast<time_t>(wait.count() / 1000),
                   static_cast<long>(wait.count() % 1000) * 1000000L};
  int sig = sigtimedwait(&set, nullptr, &timeout);
  if (sig > 0) g_stop_signal = sig;
  return g_stop_signal != 0;
}

int StopSignal() { return g_stop_signal; }

}  // namespace t0fs::bench::tier0
