// StepBarrier: the per-step barrier of the emulated accelerators (DLIO's
// MPI_Barrier, the emulated all-reduce). Ranks are threads of this process
// and, under mpirun, of other processes: the last local thread to arrive
// hands the cross-process barrier to the process's main thread (MPI is used
// from the main thread only) and everyone is released when it returns.
// Thread safety: Arrive() from rank threads, Serve() from the main thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "bench/comm.h"

namespace t0fs::bench::mlperf {

class StepBarrier {
 public:
  // `local` rank threads; `comm` spans processes (size 1: no MPI).
  StepBarrier(uint32_t local, Comm& comm) : local_(local), comm_(comm) {}
  // Blocks until every rank (all processes) arrived.
  void Arrive();
  // Main thread: performs the cross-process barriers the rank threads ask
  // for, until Finish(). Returns at once when there is one process.
  void Serve();
  // A rank thread leaves for good (done or failed); wakes Serve() once all left.
  void Leave();
  // Releases everyone (after a failure): Arrive() returns at once from now on.
  void Abort();

 private:
  const uint32_t local_;
  Comm& comm_;
  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  bool pending_ = false;  // all local arrived; waiting for the main thread
  uint32_t left_ = 0;
  bool aborted_ = false;
};

}  // namespace t0fs::bench::mlperf
