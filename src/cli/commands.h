// Subcommands of the t0fs binary. Each Register* adds one subcommand (and its
// --help) to the app; the callback stores the exit code in *exit_code.
#pragma once

namespace CLI {
class App;
}

namespace t0fs::cli {

int Main(int argc, char** argv);

void RegisterVersion(CLI::App& app, int* exit_code);
void RegisterUp(CLI::App& app, int* exit_code);
void RegisterMeta(CLI::App& app, int* exit_code);
void RegisterData(CLI::App& app, int* exit_code);
void RegisterMount(CLI::App& app, int* exit_code);
void RegisterUmount(CLI::App& app, int* exit_code);
void RegisterStatus(CLI::App& app, int* exit_code);
void RegisterFsck(CLI::App& app, int* exit_code);
void RegisterObjective(CLI::App& app, int* exit_code);
void RegisterLayout(CLI::App& app, int* exit_code);
void RegisterNode(CLI::App& app, int* exit_code);

}  // namespace t0fs::cli
