// The shape shared by the daemon subcommands (`t0fs meta`, `t0fs data`):
// resolve the config (defaults < file section < flags), start the service,
// tell systemd it is ready, run until SIGINT/SIGTERM, stop it.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command_util.h"
#include "cli/signals.h"
#include "common/logging.h"
#include "common/service_notify.h"

namespace t0fs::cli {

// Service must have `static Result<std::unique_ptr<Service>> Start(const Config&)`
// and `void Stop()`; Config must have `log_level` and Visit().
// Returns the subcommand, for subcommands of its own (`t0fs meta migrate`):
// when one of them runs, the daemon does not start.
template <typename Service, typename Config>
CLI::App* RegisterDaemon(CLI::App& app, int* exit_code, const std::string& name,
                         const std::string& help) {
  auto* cmd = app.add_subcommand(name, help);
  auto state = std::make_shared<Configured<Config>>();
  state->Register(cmd);
  cmd->callback([cmd, state, exit_code, name] {
    if (!cmd->get_subcommands().empty()) return;
    Status st = state->Resolve(name);
    if (st.ok()) st = CheckLogLevel(state->cfg.log_level);
    if (!st.ok()) {
      *exit_code = Fail(name, st);
      return;
    }
    InitLogging(name, state->cfg.log_level);
    // Starting may wait (a store that does not answer its connect): a stop
    // signal then ends the process at once. Start leaves nothing half-done
    // behind (store transactions, files written then renamed).
    auto svc = [&] {
      ExitOnStopDuring interruptible;
      return Service::Start(state->cfg);
    }();
    if (!svc.ok()) {
      *exit_code = Fail(name, svc.status());
      return;
    }
    // systemd (Type=notify): ready once the service listens; pings while the
    // process lives (a hung process stops pinging and is restarted).
    NotifyReady("t0fs " + name + " serving");
    Watchdog watchdog;
    int sig = WaitForStopSignal();
    LOG_INFO("stopping (signal {})", sig);
    NotifyStopping("t0fs " + name + " stopping");
    (*svc)->Stop();
    *exit_code = 0;
  });
  return cmd;
}

}  // namespace t0fs::cli
