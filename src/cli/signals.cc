#include "cli/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

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

}  // namespace t0fs::cli
