#include "bench/comm.h"

namespace t0fs::bench {
namespace {

class LocalComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void Barrier() override {}
  bool AnyFailed(bool local_failed) override { return local_failed; }
  std::vector<std::string> Gather(const std::string& local) override { return {local}; }
  std::string Broadcast(const std::string& value) override { return value; }
  const char* name() const override { return "threads"; }
};

}  // namespace

Comm& WorldComm() {
  static Comm* world = [] {
    Comm* mpi = MakeMpiComm();
    return mpi != nullptr ? mpi : static_cast<Comm*>(new LocalComm());
  }();
  return *world;
}

#ifndef T0FS_BENCH_HAVE_MPI
Comm* MakeMpiComm() { return nullptr; }
bool MpiCompiledIn() { return false; }
#endif

}  // namespace t0fs::bench
