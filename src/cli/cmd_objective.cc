// `t0fs objective set|get PATH`: where and how many copies of the data below
// PATH (admin_path.h: a path on a t0fs mount, or t0fs:/path).
//
// `set replicas=N` warns when fewer than N data nodes are up: the objective
// is recorded, but data below it stays under-replicated until there are.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/admin_path.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "common/config.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

Result<pb::Objective> ParseObjective(const std::vector<std::string>& items, pb::Objective base) {
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status(StatusCode::kInvalidArgument, fmt::format("'{}': expected key=value", item));
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "replicas") {
      uint32_t n = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || ptr != value.data() + value.size() || n == 0 || n > 16) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("replicas must be 1..16, not '{}'", value));
      }
      base.set_replicas(n);
    } else if (key == "placement") {
      if (value != "local" && value != "spread") {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("placement must be local or spread, not '{}'", value));
      }
      base.set_placement(value == "local" ? pb::PLACEMENT_LOCAL : pb::PLACEMENT_SPREAD);
    } else if (key == "nodes") {
      base.clear_nodes();
      size_t pos = 0;
      while (pos <= value.size() && !value.empty()) {
        size_t end = value.find(',', pos);
        if (end == std::string::npos) end = value.size();
        std::string id = value.substr(pos, end - pos);
        uint64_t n = 0;
        auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
        if (ec != std::errc() || ptr != id.data() + id.size() || n == 0) {
          return Status(StatusCode::kInvalidArgument,
                        fmt::format("nodes: '{}' is not a node id", id));
        }
        base.add_nodes(n);
        pos = end + 1;
      }
    } else if (key == "chunk-size") {
      ASSIGN_OR_RETURN(ByteSize size, ParseByteSize(value));
      base.set_chunk_size(size.bytes);
    } else {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format("unknown objective key '{}' (replicas, placement, nodes, chunk-size)", key));
    }
  }
  return base;
}

// Data nodes in state up that the objective allows (all, or its nodes=).
Result<uint32_t> UsableNodes(AdminTarget& target, const pb::Objective& objective) {
  pb::ClusterStatusRsp cluster;
  RETURN_IF_ERROR(target.channel->Call<rpc::Method::kClusterStatus>(pb::Empty(), &cluster));
  uint32_t up = 0;
  for (const pb::NodeStatus& n : cluster.nodes()) {
    bool allowed = objective.nodes_size() == 0 ||
                   std::find(objective.nodes().begin(), objective.nodes().end(), n.node()) !=
                       objective.nodes().end();
    if (allowed && n.state() == "up") ++up;
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
    auto valid = ParseObjective(s.items, pb::Objective());
    if (!valid.ok()) return Fail("objective", valid.status());
  }
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("objective", st);
  auto target = ConnectAdmin(s.admin, LocatingPath(s.path));
  if (!target.ok()) return Fail("objective", target.status());
  auto ino = ResolveInode(*target, s.path);
  if (!ino.ok()) return Fail("objective", ino.status());
  pb::ObjectiveReq req;
  req.set_ino(*ino);
  if (set) {
    pb::ObjectiveReq get;
    get.set_ino(*ino);
    pb::ObjectiveRsp current;
    Status st = target->channel->Call<rpc::Method::kObjective>(get, &current);
    if (!st.ok()) return Fail("objective", st.WithContext(s.path));
    auto obj = ParseObjective(s.items, current.objective());
    if (!obj.ok()) return Fail("objective", obj.status());
    req.set_set(true);
    req.set_recursive(!s.no_recursive);
    *req.mutable_objective() = *obj;
  }
  pb::ObjectiveRsp rsp;
  Status st = target->channel->Call<rpc::Method::kObjective>(req, &rsp);
  if (!st.ok()) return Fail("objective", st.WithContext(s.path));
  if (s.admin.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (uint64_t n : rsp.objective().nodes()) nodes.push_back(n);
    fmt::print("{}\n",
               nlohmann::json{{"path", s.path},
                              {"replicas", rsp.objective().replicas()},
                              {"placement", rsp.objective().placement() == pb::PLACEMENT_LOCAL ? "local" : "spread"},
                              {"nodes", nodes},
                              {"chunk_size", rsp.objective().chunk_size()},
                              {"changed", rsp.changed()}}
                   .dump(2));
  } else if (set) {
    fmt::print(
        "{}: {} ({} inode(s) updated; existing data converges in the background: t0fs status)\n",
        s.path, DescribeObjective(rsp.objective()), rsp.changed());
  }
  if (set) {
    // Recorded either way; but data cannot reach it until enough nodes are up.
    auto up = UsableNodes(*target, rsp.objective());
    if (up.ok() && *up < rsp.objective().replicas()) {
      fmt::print(stderr,
                 "t0fs objective: warning: replicas={} but only {} data node(s) {} up: data below "
                 "{} stays "
                 "below its objective (t0fs fsck reports it) until {} node(s) are\n",
                 rsp.objective().replicas(), *up,
                 rsp.objective().nodes_size() == 0 ? "are" : "of its nodes= are", s.path,
                 rsp.objective().replicas());
    }
  } else if (!s.admin.json) {
    fmt::print("{}: {}\n", s.path, DescribeObjective(rsp.objective()));
  }
  return 0;
}

}  // namespace

void RegisterObjective(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("objective",
                                 "Set or show the replica objective of a file or directory tree");
  cmd->require_subcommand(1);
  auto set_state = std::make_shared<ObjectiveState>();
  auto* set = cmd->add_subcommand(
      "set", "Set replicas, placement, nodes or chunk size (applies below a directory)");
  set->add_option("PATH", set_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  set->add_option("SETTINGS", set_state->items,
                  "replicas=N placement=local|spread nodes=ID,ID chunk-size=SIZE")
      ->required();
  set->add_flag("--no-recursive", set_state->no_recursive,
                "a directory only, not what is already below it");
  set_state->admin.Register(set, false);
  set->callback([set_state, exit_code] { *exit_code = RunObjective(*set_state, true); });
  auto get_state = std::make_shared<ObjectiveState>();
  auto* get = cmd->add_subcommand("get", "Show the objective of a file or directory");
  get->add_option("PATH", get_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  get_state->admin.Register(get, false);
  get->callback([get_state, exit_code] { *exit_code = RunObjective(*get_state, false); });
}

}  // namespace t0fs::cli
