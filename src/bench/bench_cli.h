// `t0fs bench ...`: registers the bench subcommand tree on the t0fs CLI.
#pragma once

namespace CLI {
class App;
}

namespace t0fs::bench {

// Adds `bench` and its subcommands; callbacks store their exit code in *exit_code.
void RegisterBenchCommand(CLI::App& app, int* exit_code);

}  // namespace t0fs::bench
