// `t0fs data`: run the data service of this node in the foreground.
#include "cli/commands.h"
#include "cli/daemon_command.h"
#include "data/data_service.h"

namespace t0fs::cli {

void RegisterData(CLI::App& app, int* exit_code) {
  RegisterDaemon<data::DataService, data::DataConfig>(
      app, exit_code, "data", "Run the data service of this node (chunks on local volumes)");
}

}  // namespace t0fs::cli
