#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/bench_cli.h"
#include "cli/cli_docs.h"
#include "cli/signals.h"
#include "cli/version_info.h"
#include "common/logging.h"

namespace t0fs::cli {

void RegisterVersion(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "version", "Print the t0fs version, its commit and build, and the kernel's FUSE features");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "one JSON object (version, git_commit, build_type, kernel features)");
  cmd->callback([exit_code, json] {
    if (*json) {
      fmt::print("{}\n", VersionJson().dump(2));
    } else {
      KernelFeatures k = ProbeKernel();
      fmt::print("{}\nkernel {}: /dev/fuse {}, passthrough {}, FUSE over io_uring {}\n", VersionLine(),
                 k.release, k.fuse_device ? "present" : "missing", k.passthrough, k.fuse_io_uring);
    }
    *exit_code = 0;
  });
}

int Main(int argc, char** argv) {
  // Before any thread exists: stop signals are taken by sigwait only.
  BlockStopSignals();
  // Warnings of the libraries (a meta server that failed, the next one
  // tried) go to stderr: stdout is the command's output (--json). Daemons
  // set up their own logging.
  InitLogging("t0fs", "warn");
  CLI::App app("t0fs: a Tier 0 parallel file system over the NVMe drives of GPU servers,\n"
               "and the benchmarks that prove it. Quick start: t0fs up");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", VersionLine(), "Print the version and exit");
  int exit_code = 0;
  RegisterUp(app, &exit_code);
  RegisterMeta(app, &exit_code);
  RegisterData(app, &exit_code);
  RegisterMount(app, &exit_code);
  RegisterUmount(app, &exit_code);
  RegisterStatus(app, &exit_code);
  RegisterFsck(app, &exit_code);
  RegisterObjective(app, &exit_code);
  RegisterLayout(app, &exit_code);
  RegisterNode(app, &exit_code);
  bench::RegisterBenchCommand(app, &exit_code);
  RegisterVersion(app, &exit_code);
  RegisterGenDocs(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}

}  // namespace t0fs::cli
