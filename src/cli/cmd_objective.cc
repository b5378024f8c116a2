// `t0fs objective set|get PATH`: where and how many copies of the data below
// PATH (admin_path.h: a path on a t0fs mount, or t0fs:/path).
//
// `set replicas=N` warns when fewer than N data nodes are up: the objective
// is recorded, but data below it stays under-replicated until there are.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/admin_path.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "t0fs/admin.h"

namespace t0fs::cli {
namespace {

// Data nodes in state up that the objective allows (all, or its nodes=).
Result<uint32_t> UsableNodes(client::AdminClient& admin, const client::Objective& objective) {
  ASSIGN_OR_RETURN(std::vector<client::NodeStatus> nodes, admin.Nodes());
  uint32_t up = 0;
  for (const client::NodeStatus& n : nodes) {
    bool allowed = objective.nodes.empty() ||
                   std::find(objective.nodes.begin(), objective.nodes.end(), n.node) != objective.nodes.end();
    if (allowed && n.state == "up") ++up;
  }
  return up;
}

struct ObjectiveState {
  AdminOptions admin;
  std::string path;
  std::vector<std::string> items;
  bool no_recursive = false;
};

int RunObjective(ObjectiveState& s, bool set) {
  // Bad settings and paths are reported before anything is contacted.
  if (set) {
    // Over a base with a goal and keep-local=drop: settings that refine the
    // path's current goal (within=, after=, keep-newest= alone) are checked
    // against it once it is known.
    client::Objective probe;
    probe.protect.kind = client::ProtectKind::kObject;
    probe.protect.keep_local = client::KeepLocal::kDrop;
    auto valid = client::ParseObjective(s.items, probe);
    if (!valid.ok()) return Fail("objective", valid.status());
  }
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("objective", st);
  auto target = ConnectAdmin(s.admin, LocatingPath(s.path));
  if (!target.ok()) return Fail("objective", target.status());
  client::AdminClient& admin = *target->admin;
  auto ino = ResolveInode(admin, s.path);
  if (!ino.ok()) return Fail("objective", ino.status());
  auto current = admin.GetObjective(InodeId(*ino));
  if (!current.ok()) return Fail("objective", current.status().WithContext(s.path));
  client::AdminClient::ObjectiveSet result{*current, 0};
  if (set) {
    auto obj = client::ParseObjective(s.items, *current);
    if (!obj.ok()) return Fail("objective", obj.status());
    auto done = admin.SetObjective(InodeId(*ino), *obj, !s.no_recursive);
    if (!done.ok()) return Fail("objective", done.status().WithContext(s.path));
    result = *done;
  }
  const client::Objective& objective = result.objective;
  if (s.admin.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (NodeId n : objective.nodes) nodes.push_back(n.value());
    fmt::print("{}\n", nlohmann::json{{"path", s.path},
                                      {"replicas", objective.replicas},
                                      {"placement", objective.placement == client::Placement::kLocal
                                                        ? "local"
                                                        : "spread"},
                                      {"nodes", nodes},
                                      {"chunk_size", objective.chunk_size},
                                      {"protect", client::DescribeProtection(objective.protect)},
                                      {"within_s", objective.protect.within_s},
                                      {"changed", result.changed}}
                           .dump(2));
  } else if (set) {
    fmt::print(
        "{}: {} ({} inode(s) updated; existing data converges in the background: t0fs status)\n",
        s.path, client::DescribeObjective(objective), result.changed);
  }
  if (set) {
    // Recorded either way; but data cannot reach it until enough nodes are up.
    auto up = UsableNodes(admin, objective);
    if (up.ok() && objective.protect.kind == client::ProtectKind::kReplicas &&
        *up < objective.protect.copies && *up >= objective.replicas) {
      fmt::print(
          stderr,
          "t0fs objective: warning: protect=replicas:{} but only {} data node(s) up: data below {} "
          "stays unprotected (t0fs status counts it) until {} node(s) are\n",
          objective.protect.copies, *up, s.path, objective.protect.copies);
    }
    if (up.ok() && *up < objective.replicas) {
      fmt::print(stderr,
                 "t0fs objective: warning: replicas={} but only {} data node(s) {} up: data below "
                 "{} stays "
                 "below its objective (t0fs fsck reports it) until {} node(s) are\n",
                 objective.replicas, *up, objective.nodes.empty() ? "are" : "of its nodes= are", s.path,
                 objective.replicas);
    }
  } else if (!s.admin.json) {
    fmt::print("{}: {}\n", s.path, client::DescribeObjective(objective));
  }
  return 0;
}

}  // namespace

void RegisterObjective(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "objective", "Set or show the replica and protection objective of a file or directory tree");
  cmd->require_subcommand(1);
  auto set_state = std::make_shared<ObjectiveState>();
  auto* set = cmd->add_subcommand(
      "set",
      "Set replicas, placement, nodes, chunk size or the background protection (applies below a "
      "directory).\n"
      "replicas=N copies are written synchronously; protect=replicas:N adds copies in the "
      "background after\n"
      "the file's last close (or within=DURATION after its last change for a file kept open, "
      "default 10m);\n"
      "protect=object copies every chunk to the object tier (meta's --object-* settings);\n"
      "protect=ec:K+M cuts every chunk into K data and M parity cells, each on its own node;\n"
      "keep-local=drop (with object or ec) removes the writer's copy once protected (reads go to "
      "the tier,\n"
      "a write stages the chunk back), with after=DURATION once the file has gone that long "
      "unused\n"
      "(not changed, not opened for reading; then a read stages it back too);\n"
      "keep-local=pressure does so only while the volume is over meta's tier-high-watermark,\n"
      "least recently used files first (a read stages a file back);\n"
      "keep-newest=N (on a directory) keeps its N most recently modified entries local "
      "(e.g. the last N checkpoints);\n"
      "`sync` removes the background goal. Example: replicas=1 protect=replicas:2 within=5m");
  set->add_option("PATH", set_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  set->add_option("SETTINGS", set_state->items,
                  "replicas=N placement=local|spread nodes=ID,ID chunk-size=SIZE "
                  "protect=replicas:N|ec:K+M|object|none within=DURATION "
                  "keep-local=keep|drop|pressure after=DURATION keep-newest=N sync")
      ->required();
  set->add_flag("--no-recursive", set_state->no_recursive,
                "a directory only, not what is already below it");
  set_state->admin.Register(set, false);
  set->callback([set_state, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunObjective(*set_state, true);
  });
  auto get_state = std::make_shared<ObjectiveState>();
  auto* get = cmd->add_subcommand("get", "Show the objective of a file or directory");
  get->add_option("PATH", get_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  get_state->admin.Register(get, false);
  get->callback([get_state, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunObjective(*get_state, false);
  });
}

}  // namespace t0fs::cli
