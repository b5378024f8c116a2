// `t0fs meta`: run the metadata service in the foreground.
#include "cli/commands.h"
#include "cli/daemon_command.h"
#include "meta/meta_service.h"

namespace t0fs::cli {

void RegisterMeta(CLI::App& app, int* exit_code) {
  RegisterDaemon<meta::MetaService, meta::MetaConfig>(
      app, exit_code, "meta", "Run the metadata service (namespace, layouts, cluster)");
}

}  // namespace t0fs::cli
