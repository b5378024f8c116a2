// `t0fs node drain|undrain ID`: move every chunk off a node before removing
// it, or let it take data again.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

struct NodeState {
  AdminOptions admin;
  uint64_t node = 0;
};

int RunNodeAdmin(NodeState& s, pb::NodeAdminState admin_state) {
  auto target = ConnectAdmin(s.admin);
  if (!target.ok()) return Fail("node", target.status());
  pb::NodeAdminReq req;
  req.set_node(s.node);
  req.set_admin_state(admin_state);
  pb::Empty rsp;
  Status st = target->channel->Call<rpc::Method::kNodeAdmin>(req, &rsp);
  if (!st.ok()) return Fail("node", st);
  if (admin_state == pb::NODE_DRAINING) {
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
  d->callback([drain, exit_code] { *exit_code = RunNodeAdmin(*drain, pb::NODE_DRAINING); });
  auto undrain = std::make_shared<NodeState>();
  auto* u = cmd->add_subcommand("undrain", "Let a drained node take data again");
  u->add_option("ID", undrain->node, "node id")->required();
  undrain->admin.Register(u);
  u->callback([undrain, exit_code] { *exit_code = RunNodeAdmin(*undrain, pb::NODE_ACTIVE); });
}

}  // namespace t0fs::cli
