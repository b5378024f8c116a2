#include "bench/bench_cli.h"

#include <CLI/CLI.hpp>

namespace t0fs::bench {

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  auto* bench = app.add_subcommand("bench", "Storage benchmarks for AI workloads (any path)");
  bench->require_subcommand(1);
  (void)exit_code;
}

}  // namespace t0fs::bench
