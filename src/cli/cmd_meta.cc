// `t0fs meta`: run the metadata service in the foreground.
#include <CLI/CLI.hpp>

#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/logging.h"
#include "meta/meta_service.h"

namespace t0fs::cli {

void RegisterMeta(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("meta", "Run the metadata service (namespace, layouts, cluster)");
  auto state = std::make_shared<Configured<meta::MetaConfig>>();
  state->Register(cmd);
  cmd->callback([state, exit_code] {
    Status st = state->Resolve("meta");
    if (st.ok()) st = CheckLogLevel(state->cfg.log_level);
    if (!st.ok()) {
      *exit_code = Fail("meta", st);
      return;
    }
    InitLogging("meta", state->cfg.log_level);
    auto svc = meta::MetaService::Start(state->cfg);
    if (!svc.ok()) {
      *exit_code = Fail("meta", svc.status());
      return;
    }
    int sig = WaitForStopSignal();
    LOG_INFO("stopping (signal {})", sig);
    (*svc)->Stop();
    *exit_code = 0;
  });
}

}  // namespace t0fs::cli
