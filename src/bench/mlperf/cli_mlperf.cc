#include "bench/mlperf/cli_mlperf.h"

#include <CLI/CLI.hpp>

#include "bench/cli_common.h"

namespace t0fs::bench::mlperf {

void RegisterMlperf(CLI::App* bench, int* exit_code) {
  auto* mlperf = AddBenchSubcommand(
      bench, "mlperf",
      "MLPerf Storage workloads, native: training (datasize, datagen, run, search), "
      "checkpointing, kvcache");
  mlperf->require_subcommand(1);
  mlperf->footer(
      "Definitions follow the MLPerf Storage rules and the reference tools (DLIO, mlpstorage, "
      "kv_cache_benchmark); mlperf.md (/usr/share/doc/t0fs, or docs/ in the source) lists every formula and every choice made where they "
      "are ambiguous.");
  RegisterTraining(mlperf, exit_code);
  RegisterCheckpointing(mlperf, exit_code);
  RegisterKvcache(mlperf, exit_code);
}

}  // namespace t0fs::bench::mlperf
