// `t0fs bench mlperf ...`: the MLPerf Storage workloads (docs/mlperf.md).
#pragma once

namespace CLI {
class App;
}

namespace t0fs::bench::mlperf {

// Adds `mlperf` with `training`, `checkpointing` and `kvcache` under `bench`.
void RegisterMlperf(CLI::App* bench, int* exit_code);

// One family each (cli_training.cc, cli_checkpointing.cc, cli_kvcache.cc).
void RegisterTraining(CLI::App* mlperf, int* exit_code);
void RegisterCheckpointing(CLI::App* mlperf, int* exit_code);
void RegisterKvcache(CLI::App* mlperf, int* exit_code);

}  // namespace t0fs::bench::mlperf
