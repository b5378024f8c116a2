#include "bench/bench_cli.h"

#include <CLI/CLI.hpp>

#include "bench/cli_common.h"
#include "bench/comm.h"
#include "bench/mlperf/cli_mlperf.h"
#include "bench/tier0/cli_tier0.h"

namespace t0fs::bench {

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  auto* bench = app.add_subcommand(
      "bench",
      "Storage benchmarks for AI workloads on any path: io (fio/elbencho), ai (AI access "
      "patterns), sweep (iozone), meta (mdtest), ec (erasure-coding CPU cost), mlperf (MLPerf "
      "Storage), report (HTML)");
  bench->require_subcommand(1);
  bench->footer(MpiCompiledIn()
                    ? "Multi-host: launch under mpirun; ranks share the work, rank 0 reports."
                    : "Multi-host: this build has no MPI; threads in one process.");
  RegisterIo(bench, exit_code);
  RegisterAi(bench, exit_code);
  RegisterSweep(bench, exit_code);
  RegisterMeta(bench, exit_code);
  RegisterEc(bench, exit_code);
  mlperf::RegisterMlperf(bench, exit_code);
  tier0::RegisterTier0(bench, exit_code);
  RegisterReport(bench, exit_code);
}

}  // namespace t0fs::bench
