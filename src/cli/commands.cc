#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_cli.h"

namespace t0fs::cli {

void RegisterVersion(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("version", "Print the t0fs version");
  cmd->callback([exit_code] {
    fmt::print("t0fs 0.1.0\n");
    *exit_code = 0;
  });
}

int Main(int argc, char** argv) {
  CLI::App app("t0fs: a Tier 0 parallel file system over the NVMe drives of GPU servers,\n"
               "and the benchmarks that prove it.");
  app.require_subcommand(1);
  int exit_code = 0;
  RegisterVersion(app, &exit_code);
  bench::RegisterBenchCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}

}  // namespace t0fs::cli
