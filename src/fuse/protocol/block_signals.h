// Threads that serve FUSE requests never take asynchronous signals: a SIGINT
// meant for the CLI's signal thread must not land in (and kill) a worker.
// Faults still arrive. Held while starting threads, they inherit the mask.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace t0fs::fuse {

class BlockAsyncSignals {
 public:
  BlockAsyncSignals() {
    sigset_t all;
    ::sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) {
      ::sigdelset(&all, sig);
    }
    ::pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~BlockAsyncSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockAsyncSignals(const BlockAsyncSignals&) = delete;
  BlockAsyncSignals& operator=(const BlockAsyncSignals&) = delete;

 private:
  sigset_t old_;
};

}  // namespace t0fs::fuse
