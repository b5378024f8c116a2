// `t0fs mount META_ADDR MOUNTPOINT`: serve a FUSE mount through libt0fs.
#include <signal.h>

#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/logging.h"
#include "common/service_notify.h"
#include "fuse/fuse_server.h"
#include "metrics/metrics_server.h"
#include "metrics/process_metrics.h"
#include "t0fs/client.h"

namespace t0fs::cli {
namespace {

struct MountState {
  std::string meta;
  std::string mountpoint;
  std::string secret_file = "secret";
  std::string log_level = "info";
  std::string config_file;
  client::ClientOptions client;
  fuse::MountConfig mount;
  std::unique_ptr<ConfigFlags> client_flags, mount_flags;
};

int RunMount(MountState& s) {
  Status st = LoadConfigFile(s.config_file, "client", s.client);
  if (st.ok()) st = LoadConfigFile(s.config_file, "mount", s.mount);
  if (st.ok()) st = s.client_flags->Apply();
  if (st.ok()) st = s.mount_flags->Apply();
  if (st.ok()) st = s.mount.Validate();
  if (st.ok()) st = CheckLogLevel(s.log_level);
  if (!st.ok()) return Fail("mount", st);
  InitLogging("mount", s.log_level);
  s.client.meta = s.meta;
  s.client.secret_file = s.secret_file;
  if (s.client.name.empty()) s.client.name = "mount " + s.mountpoint;
  auto client = [&] {
    ExitOnStopDuring interruptible;  // nothing mounted yet: a stop signal just ends it
    return client::Client::Connect(s.client);
  }();
  if (!client.ok()) return Fail("mount", client.status());
  metrics::Registry registry;
  metrics::AddProcessMetrics(registry);
  metrics::AddBuildInfo(registry, "mount");
  fuse::AddClientMetrics(registry, **client);
  // Listening before the mount, so that the mount's state names the
  // endpoint (`t0fs status`); the FUSE families join the registry after.
  metrics::MetricsServer metrics_server(registry, {.name = "t0fs mount"});
  Status metrics_started = metrics_server.Start(s.mount.metrics.listen);
  if (!metrics_started.ok()) return Fail("mount", metrics_started.WithContext("metrics-listen"));
  if (metrics_server.running()) {
    s.mount.metrics_address = metrics_server.address();
    LOG_INFO("metrics on {}", metrics_server.url());
  }
  // Without an endpoint, FUSE requests are not timed at all.
  auto server = fuse::FuseServer::Mount(**client, s.mountpoint, s.mount,
                                        s.mount.metrics.listen.empty() ? nullptr : &registry);
  if (!server.ok()) return Fail("mount", server.status());
  LOG_INFO("mounted {} (meta {}, local node {}, FUSE 7.{}; {})", (*server)->mountpoint(), s.meta,
           (*client)->local_node(), (*server)->info().minor, (*server)->DescribePassthrough());
  NotifyReady(fmt::format("t0fs mounted at {}", (*server)->mountpoint()));
  Watchdog watchdog;
  std::thread waiter([&] {
    int sig = WaitForStopSignal();
    if (sig != SIGUSR1) {
      LOG_INFO("unmounting (signal {})", sig);
      NotifyStopping(fmt::format("t0fs unmounting {}", (*server)->mountpoint()));
      (*server)->Stop();
    }
  });
  Status run = (*server)->Run();
  WakeStopWaiter();
  waiter.join();
  metrics_server.Stop();
  server->reset();
  client->reset();
  if (!run.ok()) return Fail("mount", run);
  return 0;
}

}  // namespace

void RegisterMount(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("mount", "Mount t0fs with FUSE (foreground; Ctrl-C unmounts)");
  auto state = std::make_shared<MountState>();
  cmd->add_option("META_ADDR", state->meta, "meta service address, host:port; several meta servers of one store: host:port,host:port")->required();
  cmd->add_option("MOUNTPOINT", state->mountpoint, "an existing directory")->required();
  cmd->add_option("--secret-file", state->secret_file, "cluster secret file (mode 0600)")->capture_default_str();
  cmd->add_option("--log-level", state->log_level, "trace, debug, info, warn or error")->capture_default_str();
  AddConfigFileOption(cmd, &state->config_file);
  state->client_flags = std::make_unique<ConfigFlags>(cmd);
  state->client.Visit(*state->client_flags);
  state->mount_flags = std::make_unique<ConfigFlags>(cmd);
  state->mount.Visit(*state->mount_flags);
  cmd->callback([state, exit_code] { *exit_code = RunMount(*state); });
}

}  // namespace t0fs::cli
