// The pieces the `t0fs bench mlperf training` commands share (private to
// them): the options of a command line, the workload they resolve to (with
// the parameters changed from the reference), the header every command
// prints, the run spec and one run. One file per command:
// cli_training_datagen.cc (datasize, datagen), cli_training_run.cc (run),
// cli_training_search.cc (search); cli_training.cc registers them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/mlperf/cli_mlperf_options.h"
#include "bench/mlperf/edition.h"
#include "bench/mlperf/sizing.h"
#include "bench/mlperf/training_config.h"
#include "bench/mlperf/training_run.h"
#include "common/status.h"

namespace CLI {
class App;
}

namespace t0fs::bench::mlperf::training_cli {

struct TrainingCli {
  std::string workload, accelerator, data_dir, edition = "3.0", sharding;
  uint32_t accelerators = 1;
  double host_memory_gb = 0;
  uint32_t hosts = 0;  // 0: MPI processes
  // Overrides (0 / negative = the workload's value).
  uint64_t num_files = 0;
  int64_t subfolders = -1;
  double record_length = 0, record_length_stdev = -1, computation_time = -1;
  uint32_t samples_per_file = 0, batch_size = 0, epochs = 0;
  int64_t read_threads = -1, prefetch_size = -1;
  uint64_t steps = 0;
  uint32_t threads = 4;  // datagen writers per process
  uint32_t runs = 5, warmup = 1;
  uint32_t min_acc = 1, max_acc = 64;
  std::string test_read_delay = "0";
  MlperfIoOptions io;
  MlperfOutputOptions out;
};

void AddWorkloadOptions(CLI::App* cmd, TrainingCli* o, bool data_dir);

struct Resolved {
  TrainingWorkload w;
  Edition edition = Edition::k3_0;
  uint32_t hosts = 1;
  double mem_gib = 0;
  Sizing sizing;
  std::vector<std::string> changed;  // parameters changed from the reference
};

Result<Resolved> Resolve(const TrainingCli& o, uint64_t accelerators);
std::string Header(const std::string& what, const Resolved& r, uint32_t accelerators);

// Builds the run spec for `accelerators` (shared by run and search).
Result<TrainingSpec> MakeSpec(const TrainingCli& o, const Resolved& r, uint32_t accelerators,
                              std::string* notes, bool all_files = false);
// One run; prints epoch lines (rank 0) and writes its leaf.
Result<TrainingResult> OneRun(const TrainingSpec& spec, const std::string& leaf, bool print);

// The commands; each returns the exit code.
int Datasize(const TrainingCli& o);
int Datagen(const TrainingCli& o);
int Run(const TrainingCli& o);
int Search(const TrainingCli& o);

}  // namespace t0fs::bench::mlperf::training_cli
