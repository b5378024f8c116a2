// `t0fs data`: run the data service of this node in the foreground.
#include <CLI/CLI.hpp>

#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/logging.h"
#include "data/data_service.h"

namespace t0fs::cli {

void RegisterData(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("data", "Run the data service of this node (chunks on local volumes)");
  auto state = std::make_shared<Configured<data::DataConfig>>();
  state->Register(cmd);
  cmd->callback([state, exit_code] {
    Status st = state->Resolve("data");
    if (st.ok()) st = CheckLogLevel(state->cfg.log_level);
    if (!st.ok()) {
      *exit_code = Fail("data", st);
      return;
    }
    InitLogging("data", state->cfg.log_level);
    auto svc = data::DataService::Start(state->cfg);
    if (!svc.ok()) {
      *exit_code = Fail("data", svc.status());
      return;
    }
    int sig = WaitForStopSignal();
    LOG_INFO("stopping (signal {})", sig);
    (*svc)->Stop();
    *exit_code = 0;
  });
}

}  // namespace t0fs::cli
