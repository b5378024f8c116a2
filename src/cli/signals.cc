#include "cli/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace t0fs::cli {
namespace {

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);  // WakeStopWaiter
  return set;
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // sockets report EPIPE instead
}

int WaitForStopSignal() {
  sigset_t set = StopSet();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

void WakeStopWaiter() { ::kill(::getpid(), SIGUSR1); }

namespace {

// Ends the process at the first stop signal (128 + signal); returns on
// SIGUSR1 (ExitOnStopDuring's end).
void ExitAtStopSignal() {
  sigset_t set = StopSet();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  if (sig == SIGUSR1) return;
  std::fflush(stdout);
  std::_Exit(128 + sig);
}

}  // namespace

ExitOnStopDuring::ExitOnStopDuring() : watcher_(ExitAtStopSignal) {}

ExitOnStopDuring::~ExitOnStopDuring() {
  ::pthread_kill(watcher_.native_handle(), SIGUSR1);
  watcher_.join();
}

void ExitOnStopSignal() {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(ExitAtStopSignal).detach(); });
}

}  // namespace t0fs::cli
