// Comm: the multi-host layer. Under `mpirun` (when t0fs was built with MPI)
// every rank runs the same benchmark on its own threads; ranks meet at
// barriers and rank 0 gathers the per-rank results and merges them
// (histograms exactly). Without MPI, or when not launched by mpirun, the
// world is one rank and every call is trivial.
//
// Thread safety: call from the main thread only (MPI is initialised with
// MPI_THREAD_FUNNELED).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t0fs::bench {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void Barrier() = 0;
  // True on every rank if `local_failed` is true on any rank.
  virtual bool AnyFailed(bool local_failed) = 0;
  // Rank 0 receives every rank's string (in rank order); others get {}.
  virtual std::vector<std::string> Gather(const std::string& local) = 0;
  // Every rank receives rank 0's `value`.
  virtual std::string Broadcast(const std::string& value) = 0;
  virtual const char* name() const = 0;
};

// The process's world: MPI if compiled in and launched by mpirun, else one rank.
Comm& WorldComm();
// True when this build has MPI support.
bool MpiCompiledIn();

// MPI implementation (comm_mpi.cc); nullptr when not launched by mpirun.
Comm* MakeMpiComm();

}  // namespace t0fs::bench
