// `t0fs node drain|undrain ID`: move every chunk off a node before removing
// it, or let it take data again.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"

namespace t0fs::cli {
namespace {

struct NodeState {
  AdminOptions admin;
  uint64_t node = 0;
};

int RunNodeAdmin(NodeState& s, bool drain) {
  auto target = ConnectAdmin(s.admin);
  if (!target.ok()) return Fail("node", target.status());
  client::AdminClient& admin = *target->admin;
  Status st = drain ? admin.Drain(NodeId(s.node)) : admin.Undrain(NodeId(s.node));
  if (!st.ok()) return Fail("node", st);
  if (drain) {
    fmt::print("node {} is draining: its chunks move to other nodes (progress: t0fs status)\n",
               s.node);
  } else {
    fmt::print("node {} is active again\n", s.node);
  }
  return 0;
}

}  // namespace

void RegisterNode(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("node", "Administer data nodes (drain before removing one)");
  cmd->require_subcommand(1);
  auto drain = std::make_shared<NodeState>();
  auto* d =
      cmd->add_subcommand("drain", "Move every chunk off a node (it takes no new data meanwhile)");
  d->add_option("ID", drain->node, "node id (t0fs status)")->required();
  drain->admin.Register(d);
  d->callback([drain, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunNodeAdmin(*drain, /*drain=*/true);
  });
  auto undrain = std::make_shared<NodeState>();
  auto* u = cmd->add_subcommand("undrain", "Let a drained node take data again");
  u->add_option("ID", undrain->node, "node id")->required();
  undrain->admin.Register(u);
  u->callback([undrain, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunNodeAdmin(*undrain, /*drain=*/false);
  });
}

}  // namespace t0fs::cli
