#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_cli.h"
#include "cli/signals.h"

namespace t0fs::cli {

void RegisterVersion(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("version", "Print the t0fs version");
  cmd->callback([exit_code] {
    fmt::print("t0fs 0.1.0\n");
    *exit_code = 0;
  });
}

int Main(int argc, char** argv) {
  // Before any thread exists: stop signals are taken by sigwait only.
  BlockStopSignals();
  CLI::App app("t0fs: a Tier 0 parallel file system over the NVMe drives of GPU servers,\n"
               "and the benchmarks that prove it. Quick start: t0fs up");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int exit_code = 0;
  RegisterUp(app, &exit_code);
  RegisterMeta(app, &exit_code);
  RegisterData(app, &exit_code);
  RegisterMount(app, &exit_code);
  RegisterStatus(app, &exit_code);
  RegisterFsck(app, &exit_code);
  RegisterObjective(app, &exit_code);
  RegisterLayout(app, &exit_code);
  RegisterNode(app, &exit_code);
  bench::RegisterBenchCommand(app, &exit_code);
  RegisterVersion(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}

}  // namespace t0fs::cli
