// The MPI world (built when CMake finds MPI: T0FS_BENCH_HAVE_MPI).
#include <mpi.h>

#include <cstdlib>

#include "bench/comm.h"

namespace t0fs::bench {
namespace {

// Launched by an MPI launcher? (MPI_Init in a plain process would start a
// singleton world, which for some implementations spawns helpers.)
bool LaunchedByMpirun() {
  for (const char* var : {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
                          "MPI_LOCALNRANKS", "HYDI_CONTROL_FD"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

class MpiComm final : public Comm {
 public:
  MpiComm() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  bool AnyFailed(bool local_failed) override {
    int mine = local_failed ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any != 0;
  }
  std::vector<std::string> Gather(const std::string& local) override {
    int len = static_cast<int>(local.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> displs(lens.size());
    int total = 0;
    for (size_t idx = 0; idx < lens.size(); ++idx) {
      displs[idx] = total;
      total += lens[idx];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Gatherv(local.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (size_t idx = 0; idx < lens.size(); ++idx) {
      out.push_back(all.substr(static_cast<size_t>(displs[idx]), static_cast<size_t>(lens[idx])));
    }
    return out;
  }
  std::string Broadcast(const std::string& value) override {
    int len = static_cast<int>(value.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? value : std::string(static_cast<size_t>(len), '\0');
    MPI_Bcast(out.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }
  const char* name() const override { return "mpi"; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

Comm* MakeMpiComm() { return LaunchedByMpirun() ? new MpiComm() : nullptr; }
bool MpiCompiledIn() { return true; }

}  // namespace t0fs::bench
